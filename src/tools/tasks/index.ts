import type { AnyTool } from "../../core/tool.js";
import { taskOutputTool } from "./task-output.js";
import { taskStopTool } from "./task-stop.js";

export const tasksTools: AnyTool[] = [taskOutputTool, taskStopTool];
