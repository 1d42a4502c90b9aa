import type { AnyTool } from "../../core/tool.js";
import { listMcpResources } from "./list-resources.js";
import { readMcpResource } from "./read-resource.js";

export const mcpTools: AnyTool[] = [listMcpResources, readMcpResource];
