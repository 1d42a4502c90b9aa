import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { McpResourceContents } from "../core/mcp-manager.js";
import type { ContentBlock, ToolResult } from "../core/result.js";
import type { Session } from "../core/session.js";

/**
 * Conversions between our content blocks and MCP's. Both directions live here so the server (which sends
 * our results) and the client manager (which receives other servers' results) agree on one mapping.
 */

/** The MCP content shapes we read; structural, so this module needs no SDK import. */
export type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name?: string; mimeType?: string; description?: string }
  | { type: "resource"; resource: McpResourceContents }
  | { type: string; [key: string]: unknown };

/** What a converted block needs to know: whose content it is, and where binary payloads may be saved. */
export interface ContentOrigin {
  server: string;
  session: Session;
}

const EXTENSION_BY_MIME: Record<string, string> = {
  "application/pdf": ".pdf",
  "application/json": ".json",
  "application/zip": ".zip",
  "application/gzip": ".gz",
  "audio/wav": ".wav",
  "audio/mpeg": ".mp3",
  "audio/ogg": ".ogg",
};

/** Image types a model can look at; other images are saved like any other binary. */
const VIEWABLE_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Blobs of these types are text a model can read directly, base64 only for transport. */
function isTextual(mimeType: string | undefined): boolean {
  return mimeType !== undefined && (mimeType.startsWith("text/") || /[/+]json$/.test(mimeType));
}

/** Saves a base64 payload into the session directory; models get the path, never raw bytes. */
function saveBinary(base64: string, mimeType: string | undefined, origin: ContentOrigin): string {
  const extension = (mimeType && EXTENSION_BY_MIME[mimeType]) ?? ".bin";
  const safeServer = origin.server.replace(/[^A-Za-z0-9_-]/g, "_");
  const path = join(origin.session.dir, `mcp-${safeServer}-${randomUUID().slice(0, 8)}${extension}`);
  writeFileSync(path, Buffer.from(base64, "base64"));
  return path;
}

function binaryBlock(
  base64: string,
  mimeType: string | undefined,
  uri: string | undefined,
  origin: ContentOrigin,
) {
  if (mimeType && VIEWABLE_IMAGE_TYPES.has(mimeType)) {
    return { type: "image", data: base64, mimeType } satisfies ContentBlock;
  }
  const path = saveBinary(base64, mimeType, origin);
  const bytes = Buffer.byteLength(base64, "base64");
  const what = uri
    ? `${uri} (${mimeType ?? "binary"}, ${bytes} bytes)`
    : `${mimeType ?? "binary"} data (${bytes} bytes)`;
  return {
    type: "text",
    text: `${what} from MCP server ${origin.server} was saved to ${path}`,
  } satisfies ContentBlock;
}

/** One resource's contents (from resources/read or an embedded resource) as our blocks. */
export function fromResourceContents(contents: McpResourceContents, origin: ContentOrigin): ContentBlock {
  if (typeof contents.text === "string") return { type: "text", text: contents.text };
  if (typeof contents.blob === "string" && isTextual(contents.mimeType)) {
    return { type: "text", text: Buffer.from(contents.blob, "base64").toString("utf8") };
  }
  if (typeof contents.blob === "string")
    return binaryBlock(contents.blob, contents.mimeType, contents.uri, origin);
  return { type: "text", text: `${contents.uri}: the server sent no text or data for this resource.` };
}

/** A tool result's content from another MCP server as our blocks: nothing dropped, binaries saved to files. */
export function fromMcpContent(content: readonly McpContent[], origin: ContentOrigin): ContentBlock[] {
  return content.map((block): ContentBlock => {
    switch (block.type) {
      case "text":
        return { type: "text", text: String(block.text) };
      case "image":
      case "audio":
        return binaryBlock(String(block.data), String(block.mimeType), undefined, origin);
      case "resource": {
        const resource = block.resource as McpResourceContents;
        const inner = fromResourceContents(resource, origin);
        if (inner.type !== "text") return inner;
        return {
          type: "text",
          text: `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}]\n${inner.text}`,
        };
      }
      case "resource_link": {
        const link = block as { uri: string; name?: string; mimeType?: string; description?: string };
        const details = [link.mimeType, link.description].filter(Boolean).join("; ");
        return {
          type: "text",
          text: `Resource link: ${link.name ?? link.uri} <${link.uri}>${details ? ` (${details})` : ""}. Read it with ReadMcpResource {"server": "${origin.server}", "uri": "${link.uri}"}.`,
        };
      }
      default:
        return { type: "text", text: `[${block.type} content]\n${JSON.stringify(block)}` };
    }
  });
}

/** Our result as an MCP tools/call result. */
export function toMcpResult(result: ToolResult) {
  const content = result.content.map((block) =>
    block.type === "text"
      ? { type: "text" as const, text: block.text }
      : { type: "image" as const, data: block.data, mimeType: block.mimeType },
  );
  return result.isError ? { content, isError: true } : { content };
}
