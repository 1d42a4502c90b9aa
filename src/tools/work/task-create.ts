import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { itemData, type WorkItem, workStore } from "./items.js";

export const taskCreateTool = defineTool({
  name: ToolName.TaskCreate,
  description: [
    "Adds a work item to this session's task list, to plan and track multi-step work.",
    "",
    `- The item starts pending; move it along with ${ToolName.TaskUpdate} (in_progress, completed) and see the list with ${ToolName.TaskList}.`,
    '- subject is a short imperative title; description says what needs doing; activeForm is the present-continuous form shown while it runs ("Running the tests").',
    `- Ids share one space with background commands, so ${ToolName.TaskOutput} and ${ToolName.TaskStop} take any id.`,
  ].join("\n"),
  // Session bookkeeping: it changes nothing outside the session.
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    subject: z.string().min(1).describe('A short imperative title, e.g. "Fix the login bug".'),
    description: z.string().describe("What needs to be done, in enough detail to do it later."),
    activeForm: z
      .string()
      .optional()
      .describe('Present-continuous form shown while in progress, e.g. "Fixing the login bug".'),
    metadata: z.record(z.string(), z.unknown()).optional().describe("Any data to keep with the item."),
  }),
  async execute(input, ctx) {
    const store = workStore(ctx);
    const item = store.addWork({
      subject: input.subject,
      detail: input.description,
      activeForm: input.activeForm,
      metadata: input.metadata ?? {},
    }) as WorkItem;
    return ToolResult.success(`Task ${item.id} created successfully: ${item.work.subject}`, {
      task: itemData(store, item),
    });
  },
});
