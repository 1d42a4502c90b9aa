import type { AnyTool } from "../../core/tool.js";

export const searchTools: AnyTool[] = [];
