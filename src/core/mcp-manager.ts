import type { AnyTool } from "./tool.js";

/** One resource an MCP server offers. */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  mimeType?: string;
  description?: string;
}

/** One item of a `resources/read` answer: text, or base64 `blob` bytes. */
export interface McpResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

export interface McpServerStatus {
  name: string;
  /**
   * `skipped`: deliberately not used (it is cc-tools itself, or a chain's depth limit), see `reason`;
   * `pending`: a project .mcp.json server not yet approved; `disabled`: one the user turned off.
   */
  status: "connecting" | "connected" | "failed" | "closed" | "skipped" | "pending" | "disabled";
  transport: "stdio" | "http" | "sse";
  error?: string;
  /** Why a skipped server is not used. */
  reason?: string;
  toolCount: number;
  /** Where the server was configured (.mcp.json path or settings). */
  source?: string;
}

/**
 * The MCP servers a session uses (from .mcp.json and settings). Implemented in src/mcp; the core only
 * needs to see their tools and resources.
 */
export interface McpManager {
  /** Every connected server's tools, named `mcp__<server>__<tool>`. */
  tools(): AnyTool[];
  servers(): McpServerStatus[];
  /**
   * Connects every configured server in parallel, each bounded by a timeout; resolves when all have
   * connected or failed. Idempotent. Failures show in servers(), they are never thrown.
   */
  connect(): Promise<void>;
  /** Calls `listener` whenever tools() changes (a server connected, reconnected, or changed its list). */
  onToolsChanged(listener: () => void): () => void;
  /** Resources of one server, or of every connected server; throws an Error naming the servers that exist. */
  listResources(server?: string, signal?: AbortSignal): Promise<McpResourceInfo[]>;
  readResource(server: string, uri: string, signal?: AbortSignal): Promise<McpResourceContents[]>;
  close(): Promise<void>;
}
