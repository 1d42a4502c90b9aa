import type { AnyTool } from "../../core/tool.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";

export const searchTools: AnyTool[] = [globTool, grepTool];
