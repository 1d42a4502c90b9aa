import type { ContentBlock } from "./result.js";
import type { AnyTool } from "./tool.js";

/** One resource an MCP server offers. */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  mimeType?: string;
  description?: string;
}

export interface McpServerStatus {
  name: string;
  status: "connecting" | "connected" | "failed" | "closed";
  transport: "stdio" | "http" | "sse";
  error?: string;
  toolCount: number;
}

/**
 * The MCP servers a session uses (from .mcp.json and settings). Implemented in src/mcp; the core only
 * needs to see their tools and resources.
 */
export interface McpManager {
  /** Every connected server's tools, named `mcp__<server>__<tool>`. */
  tools(): AnyTool[];
  servers(): McpServerStatus[];
  listResources(server?: string): Promise<McpResourceInfo[]>;
  readResource(server: string, uri: string, signal?: AbortSignal): Promise<ContentBlock[]>;
  close(): Promise<void>;
}
