import type { AnyTool } from "../../core/tool.js";

export const fileTools: AnyTool[] = [];
