import type { ToolContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import { ToolName } from "../../core/tool-names.js";
import { type Task, type TaskStore, taskStoreSlot } from "../../tasks/store.js";

export type WorkItem = Task & { work: NonNullable<Task["work"]> };

export function workStore(ctx: ToolContext): TaskStore {
  return ctx.session.get(taskStoreSlot);
}

/** The session's work item with this id; otherwise an error naming the ids there are. */
export function findWorkItem(ctx: ToolContext, id: string): WorkItem {
  const store = workStore(ctx);
  const task = store.get(id);
  if (task?.work) return task as WorkItem;
  if (task) {
    throw new InputError(
      `${id} is a background ${task.kind} task, not a work item; read it with ${ToolName.TaskOutput} or stop it with ${ToolName.TaskStop}.`,
    );
  }
  const known = store.list("work");
  const hint =
    known.length > 0
      ? `Work items of this session: ${known.map((t) => `${t.id} (${t.description})`).join(", ")}.`
      : `This session has no work items; create one with ${ToolName.TaskCreate}.`;
  throw new InputError(`No work item with id "${id}". ${hint}`);
}

/** The items still blocking this one: those not completed yet. */
export function openBlockers(store: TaskStore, item: WorkItem): string[] {
  return item.work.blockedBy.filter((id) => store.get(id)?.status !== "completed");
}

/** One line per item, as TaskList shows it. */
export function itemLine(store: TaskStore, item: WorkItem): string {
  const owner = item.work.owner ? ` (owner: ${item.work.owner})` : "";
  const blockers = openBlockers(store, item);
  const blocked = blockers.length > 0 ? ` [blocked by ${blockers.join(", ")}]` : "";
  return `${item.id} [${item.status}] ${item.work.subject}${owner}${blocked}`;
}

/** The item's fields for hosts (result metadata). */
export function itemData(store: TaskStore, item: WorkItem) {
  return {
    id: item.id,
    subject: item.work.subject,
    description: item.work.detail,
    activeForm: item.work.activeForm,
    status: item.status,
    owner: item.work.owner,
    metadata: item.work.metadata,
    blocks: item.work.blocks,
    blockedBy: item.work.blockedBy,
    openBlockers: openBlockers(store, item),
  };
}
