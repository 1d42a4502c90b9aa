import * as z from "zod";
import { errorMessage, ToolError } from "../core/errors.js";
import { PermissionLevel } from "../core/permission-level.js";
import { ToolResult } from "../core/result.js";
import { type AnyTool, DEFAULT_MAX_RESULT_CHARS, type JsonSchema } from "../core/tool.js";
import { fromMcpContent, type McpContent } from "./content.js";

/** What the manager knows about one tool of a connected server. */
export interface RemoteToolInfo {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** The part of a connection a remote tool needs: call the tool, on whichever client is current. */
export interface RemoteCaller {
  callTool(
    tool: string,
    args: Record<string, unknown>,
    options: {
      signal: AbortSignal;
      onProgress: (p: { progress: number; total?: number; message?: string }) => void;
    },
  ): Promise<{ content?: McpContent[]; structuredContent?: unknown; isError?: boolean }>;
}

/** Characters outside this set are replaced in the `mcp__server__tool` name (models reject them in tool names). */
const UNSAFE_NAME_CHARS = /[^A-Za-z0-9_-]/g;

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(UNSAFE_NAME_CHARS, "_")}`;
}

/**
 * The server's JSON Schema as a zod validator, so bad input is refused with our usual messages before a round
 * trip. Schemas zod cannot read fall back to any object: the server validates them itself.
 */
function validatorFor(schema: JsonSchema): z.ZodType {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return z.looseObject({});
  }
}

/** A tool of another MCP server, as one of ours: it runs through the executor like any built-in tool. */
export function remoteTool(server: string, info: RemoteToolInfo, caller: RemoteCaller): AnyTool {
  const name = mcpToolName(server, info.name);
  const description = info.description ?? `Tool ${info.name} of MCP server ${server}.`;
  const inputSchema = { type: "object", ...info.inputSchema };
  return {
    name,
    aliases: [],
    description,
    permissionLevel: PermissionLevel.Execute,
    inputSchema: validatorFor(inputSchema),
    maxResultChars: DEFAULT_MAX_RESULT_CHARS,
    isConcurrencySafe: () => false,
    permissionSubject: () => ({ kind: "none" }),
    requires: [],
    unavailableReason: () => undefined,
    deferred: false,
    toDefinition: () => ({ name, description, input_schema: inputSchema }),
    async execute(input, ctx) {
      let result: Awaited<ReturnType<RemoteCaller["callTool"]>>;
      try {
        result = await caller.callTool(info.name, input as Record<string, unknown>, {
          signal: ctx.signal,
          onProgress: (p) => ctx.reportProgress(p),
        });
      } catch (error) {
        throw new ToolError(`MCP server ${server} could not run ${info.name}: ${errorMessage(error)}`);
      }
      const blocks = fromMcpContent(result.content ?? [], { server, session: ctx.session });
      if (blocks.length === 0 && result.structuredContent !== undefined) {
        blocks.push({ type: "text", text: JSON.stringify(result.structuredContent, null, 2) });
      }
      if (blocks.length === 0) blocks.push({ type: "text", text: `${info.name} returned no content.` });
      return result.isError ? { content: blocks, isError: true } : ToolResult.success(blocks);
    },
  };
}
