import type { SessionSlot } from "../core/session.js";

export type TodoStatus = "pending" | "in_progress" | "completed";

/** One entry of the session's todo list (TodoWrite), Claude Code's shape. */
export interface Todo {
  content: string;
  status: TodoStatus;
  activeForm: string;
}

/**
 * The session's todo list. TodoWrite replaces it whole; hosts read it (a UI showing progress) with
 * `session.get(todoSlot).items` or are told of each change through `onChange`.
 */
export class TodoList {
  private list: readonly Todo[] = [];
  private readonly listeners = new Set<(items: readonly Todo[]) => void>();

  get items(): readonly Todo[] {
    return this.list;
  }

  /** Replaces the list in one step: readers see the old list or the new one, never a mix. */
  replace(items: readonly Todo[]): void {
    this.list = Object.freeze(items.map((t) => Object.freeze({ ...t })));
    for (const listener of this.listeners) listener(this.list);
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: (items: readonly Todo[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export const todoSlot: SessionSlot<TodoList> = {
  key: "todos",
  create: () => new TodoList(),
  save: (todos) => todos.items,
  load: (data) => {
    const todos = new TodoList();
    if (Array.isArray(data)) {
      todos.replace(
        (data as Todo[]).filter(
          (t) =>
            typeof t?.content === "string" &&
            typeof t.activeForm === "string" &&
            typeof t.status === "string",
        ),
      );
    }
    return todos;
  },
};
