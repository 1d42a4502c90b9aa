import type { AnyTool } from "../../core/tool.js";
import { taskCreateTool } from "./task-create.js";
import { taskGetTool } from "./task-get.js";
import { taskListTool } from "./task-list.js";
import { taskUpdateTool } from "./task-update.js";
import { todoWriteTool } from "./todo-write.js";

export const workTools: AnyTool[] = [
  taskCreateTool,
  taskGetTool,
  taskUpdateTool,
  taskListTool,
  todoWriteTool,
];
