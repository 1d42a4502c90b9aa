import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { findWorkItem, itemData, openBlockers, workStore } from "./items.js";

export const taskGetTool = defineTool({
  name: ToolName.TaskGet,
  description: `Shows one work item of this session's task list in full: subject, description, status, owner, metadata, and what it blocks and is blocked by. Take the id from ${ToolName.TaskCreate} or ${ToolName.TaskList}.`,
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    taskId: z.string().describe("The id of the work item."),
  }),
  async execute(input, ctx) {
    const store = workStore(ctx);
    const item = findWorkItem(ctx, input.taskId);
    const { work } = item;
    const lines = [`Task ${item.id}: ${work.subject}`, `Status: ${item.status}`];
    if (work.owner) lines.push(`Owner: ${work.owner}`);
    if (work.activeForm) lines.push(`Active form: ${work.activeForm}`);
    lines.push(`Description: ${work.detail || "(none)"}`);
    if (work.blocks.length > 0) lines.push(`Blocks: ${work.blocks.join(", ")}`);
    if (work.blockedBy.length > 0) {
      const open = new Set(openBlockers(store, item));
      const shown = work.blockedBy.map((id) => (open.has(id) ? id : `${id} (completed)`));
      lines.push(`Blocked by: ${shown.join(", ")}`);
    }
    if (Object.keys(work.metadata).length > 0) lines.push(`Metadata: ${JSON.stringify(work.metadata)}`);
    return ToolResult.success(lines.join("\n"), { task: itemData(store, item) });
  },
});
