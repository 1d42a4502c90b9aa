import type { AnyTool } from "../../core/tool.js";
import { bashTool } from "./bash.js";
import { powershellTool } from "./powershell.js";

export const shellTools: AnyTool[] = [bashTool, powershellTool];
