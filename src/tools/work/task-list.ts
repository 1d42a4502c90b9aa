import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { itemData, itemLine, type WorkItem, workStore } from "./items.js";

export const taskListTool = defineTool({
  name: ToolName.TaskList,
  description: `Lists this session's work items: id, status, subject, owner, and the items still blocking each one. Use ${ToolName.TaskGet} for an item's full description.`,
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({}),
  async execute(_input, ctx) {
    const store = workStore(ctx);
    const items = store.list("work") as WorkItem[];
    if (items.length === 0) {
      return ToolResult.success(`No tasks yet. Add one with ${ToolName.TaskCreate}.`, { tasks: [] });
    }
    return ToolResult.success(items.map((item) => itemLine(store, item)).join("\n"), {
      tasks: items.map((item) => itemData(store, item)),
    });
  },
});
