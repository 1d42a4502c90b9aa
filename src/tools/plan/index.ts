import type { AnyTool } from "../../core/tool.js";
import { enterPlanModeTool } from "./enter-plan-mode.js";
import { exitPlanModeTool } from "./exit-plan-mode.js";

export const planTools: AnyTool[] = [enterPlanModeTool, exitPlanModeTool];
