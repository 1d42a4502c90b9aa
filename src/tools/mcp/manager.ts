import type { ToolContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import type { McpManager } from "../../core/mcp-manager.js";

/** The session's MCP manager, or a refusal saying how to configure servers. */
export function requireMcpManager(ctx: ToolContext): McpManager {
  if (ctx.mcpManager) return ctx.mcpManager;
  throw new InputError(
    `No MCP servers are configured for ${ctx.workingDir}. Add them to .mcp.json ({"mcpServers": {"name": {"command": "..."}}}) or to settings mcpServers, then check them with 'cc-tools mcp-servers'.`,
  );
}
