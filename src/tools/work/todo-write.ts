import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { type TodoStatus, todoSlot } from "../../tasks/todos.js";

const STATUSES: readonly TodoStatus[] = ["pending", "in_progress", "completed"];

export const todoWriteTool = defineTool({
  name: ToolName.TodoWrite,
  description: [
    "Replaces this session's todo list with the one given, to plan multi-step work and show progress.",
    "",
    "- Send the whole list every time: items left out are gone.",
    "- At most one item may be in_progress; mark items completed as soon as they are done.",
    '- content is the imperative form ("Run the tests"), activeForm the present-continuous form shown while it runs ("Running the tests").',
    `- For work items with owners and dependencies, use ${ToolName.TaskCreate} instead.`,
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    todos: z
      .array(
        z.strictObject({
          content: z.string().min(1),
          status: z.enum(["pending", "in_progress", "completed"]),
          activeForm: z.string().min(1),
        }),
      )
      .describe("The complete new todo list."),
  }),
  async execute(input, ctx) {
    const active = input.todos.filter((t) => t.status === "in_progress");
    if (active.length > 1) {
      throw new InputError(
        `${active.length} items are in_progress (${active.map((t) => `"${t.content}"`).join(", ")}); at most one may be. Keep the one you are working on in_progress and set the others to pending or completed. The list was not changed.`,
      );
    }
    const todos = ctx.session.get(todoSlot);
    todos.replace(input.todos);
    const counts = Object.fromEntries(
      STATUSES.map((s) => [s, input.todos.filter((t) => t.status === s).length]),
    );
    const summary = STATUSES.map((s) => `${counts[s]} ${s}`).join(", ");
    const now = active[0] ? ` Now: ${active[0].activeForm}.` : "";
    return ToolResult.success(
      `Todo list updated: ${input.todos.length} item${input.todos.length === 1 ? "" : "s"} (${summary}).${now}`,
      { todos: todos.items, counts },
    );
  },
});
