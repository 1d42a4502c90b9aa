import * as z from "zod";
import { errorMessage, ToolError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import type { ContentBlock } from "../../core/result.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { fromResourceContents } from "../../mcp/content.js";
import { requireMcpManager } from "./manager.js";

export const readMcpResource = defineTool({
  name: "ReadMcpResource",
  description:
    "Reads one resource from an MCP server by its URI (find URIs with ListMcpResources).\n" +
    "Text comes back as text and images as images; other binary contents are saved to a file whose path is returned.",
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema: z.strictObject({
    server: z.string().describe("The MCP server's name"),
    uri: z.string().describe("The resource URI, as ListMcpResources shows it"),
  }),
  async execute({ server, uri }, ctx) {
    const manager = requireMcpManager(ctx);
    let contents: Awaited<ReturnType<typeof manager.readResource>>;
    try {
      contents = await manager.readResource(server, uri, ctx.signal);
    } catch (error) {
      throw new ToolError(
        `Reading ${uri} from MCP server ${server} failed: ${errorMessage(error)} List what exists with ListMcpResources {"server": "${server}"}.`,
      );
    }
    if (contents.length === 0) return ToolResult.success(`${uri} on MCP server ${server} is empty.`);
    const origin = { server, session: ctx.session };
    const blocks: ContentBlock[] = contents.map((item) => fromResourceContents(item, origin));
    return ToolResult.success(blocks, { server, uri, parts: contents.length });
  },
});
