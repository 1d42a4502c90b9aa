import * as z from "zod";
import { errorMessage, ToolError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { requireMcpManager } from "./manager.js";

export const listMcpResources = defineTool({
  name: ToolName.ListMcpResources,
  description:
    "Lists the resources (files, documents, data) that connected MCP servers offer: uri, name, MIME type and server of each.\n" +
    "Pass `server` to list one server's resources; omit it to list every server's. Read one with ReadMcpResource.",
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema: z.strictObject({
    server: z
      .string()
      .optional()
      .describe("Only this server's resources (the name used in .mcp.json or settings)"),
  }),
  async execute({ server }, ctx) {
    const manager = requireMcpManager(ctx);
    let resources: Awaited<ReturnType<typeof manager.listResources>>;
    try {
      resources = await manager.listResources(server, ctx.signal);
    } catch (error) {
      throw new ToolError(errorMessage(error));
    }
    if (resources.length === 0) {
      const scope = server ? `MCP server ${server} offers` : "the connected MCP servers offer";
      const failed = manager.servers().filter((s) => s.status === "failed");
      const note = failed.length > 0 ? ` (not connected: ${failed.map((s) => s.name).join(", ")})` : "";
      return ToolResult.success(`No resources found: ${scope} none${note}.`);
    }
    return ToolResult.success(JSON.stringify(resources, null, 2), { count: resources.length });
  },
});
