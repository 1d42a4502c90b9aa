import type { AnyTool } from "../../core/tool.js";
import { taskTool } from "./task.js";

export const agentTools: AnyTool[] = [taskTool];
