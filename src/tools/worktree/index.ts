import type { AnyTool } from "../../core/tool.js";
import { enterWorktreeTool } from "./enter-worktree.js";
import { exitWorktreeTool } from "./exit-worktree.js";

export const worktreeTools: AnyTool[] = [enterWorktreeTool, exitWorktreeTool];
