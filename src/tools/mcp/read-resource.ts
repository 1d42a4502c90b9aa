import { fileURLToPath } from "node:url";
import * as z from "zod";
import { errorMessage, ToolError } from "../../core/errors.js";
import type { McpManager } from "../../core/mcp-manager.js";
import { PermissionLevel } from "../../core/permission-level.js";
import type { ContentBlock } from "../../core/result.js";
import { ToolResult } from "../../core/result.js";
import { defineTool, type PermissionSubject } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { fromResourceContents } from "../../mcp/content.js";
import { requireMcpManager } from "./manager.js";

/** How many of a server's resource URIs a failed read lists, so the model can pick the right one. */
const URIS_SHOWN_ON_ERROR = 10;

/** What to try after a failed read: the server's actual URIs when it can list them, else how to list them. */
async function whatExists(manager: McpManager, server: string, signal: AbortSignal): Promise<string> {
  const status = manager.servers().find((s) => s.name === server)?.status;
  if (status === undefined) return "List every server's resources with ListMcpResources {}.";
  if (status !== "connected") return ""; // the error already says why the server is unusable
  try {
    const resources = await manager.listResources(server, signal);
    if (resources.length === 0) return `MCP server ${server} lists no resources.`;
    const shown = resources.slice(0, URIS_SHOWN_ON_ERROR).map((r) => r.uri);
    const more = resources.length - shown.length;
    return `MCP server ${server} offers: ${shown.join(", ")}${more > 0 ? ` and ${more} more (see ListMcpResources {"server": "${server}"})` : ""}.`;
  } catch {
    return `List what exists with ListMcpResources {"server": "${server}"}.`;
  }
}

/**
 * What reading a resource touches: a `file://` URI names a file on this machine, which the server hands
 * out, so it is judged as a Read of that file (Read deny rules, asking outside the workspace). A file URI
 * that names no local path (another host, malformed) is judged as reading `/`: outside any workspace.
 */
export function resourceSubject(uri: string): PermissionSubject {
  if (!/^file:/i.test(uri.trim())) return { kind: "none" };
  try {
    return { kind: "path", path: fileURLToPath(new URL(uri.trim())), access: "read" };
  } catch {
    return { kind: "path", path: "/", access: "read" };
  }
}

/** An error message ending in a full stop, so advice can follow it. */
const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

export const readMcpResource = defineTool({
  name: ToolName.ReadMcpResource,
  description:
    "Reads one resource from an MCP server by its URI (find URIs with ListMcpResources).\n" +
    "Text comes back as text and images as images; other binary contents are saved to a file whose path is returned.",
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema: z.strictObject({
    server: z.string().describe("The MCP server's name"),
    uri: z.string().describe("The resource URI, as ListMcpResources shows it"),
  }),
  permissionSubject: ({ uri }) => resourceSubject(uri),
  async execute({ server, uri }, ctx) {
    const manager = requireMcpManager(ctx);
    let contents: Awaited<ReturnType<typeof manager.readResource>>;
    try {
      contents = await manager.readResource(server, uri, ctx.signal);
    } catch (error) {
      throw new ToolError(
        `Reading ${uri} from MCP server ${server} failed: ${sentence(errorMessage(error))} ${await whatExists(manager, server, ctx.signal)}`.trim(),
      );
    }
    if (contents.length === 0) return ToolResult.success(`${uri} on MCP server ${server} is empty.`);
    const origin = { server, session: ctx.session };
    const blocks: ContentBlock[] = contents.map((item) => fromResourceContents(item, origin));
    return ToolResult.success(blocks, { server, uri, parts: contents.length });
  },
});
