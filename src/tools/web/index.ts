import type { AnyTool } from "../../core/tool.js";
import { webFetchTool } from "./webfetch.js";
import { webSearchTool } from "./websearch.js";

export const webTools: AnyTool[] = [webFetchTool, webSearchTool];
