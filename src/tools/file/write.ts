import * as z from "zod";
import { MAX_ARGUMENT_CHARS } from "../../core/limits.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { DEFAULT_FORMAT, decodeText, encodeText, unencodable, viewOf } from "../../fs/codec.js";
import { newFileFormat } from "../../fs/editorconfig.js";
import { pathSubject } from "../../fs/paths.js";
import {
  readCurrent,
  requireFreshRead,
  requireWritableEncoding,
  withWriteTarget,
  writeAndRecord,
} from "./guard.js";

const inputSchema = z.strictObject({
  file_path: z
    .string()
    .describe(
      "The file to create or overwrite: an absolute path, or a path relative to the working directory.",
    ),
  content: z.string().describe("The complete new content of the file."),
});

const description = `Writes a whole file: creates it (and any missing parent directories) or replaces an existing one.

- An existing file must have been read with Read in this session first, and must not have changed since; otherwise nothing is written.
- The file keeps its encoding, byte-order mark and line-ending style (CRLF files stay CRLF); new files follow .editorconfig, else UTF-8 with LF.
- The write is atomic: the file is never left half-written.
- To change part of a file, prefer Edit: it sends only the change.
- Over MCP, one call's arguments may hold at most ${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB of JSON; write a larger file in parts (Write, then Edit) or with Bash.`;

function lineCount(text: string): number {
  if (text === "") return 0;
  let n = text.endsWith("\n") ? 0 : 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

export const writeTool = defineTool({
  name: ToolName.Write,
  description,
  permissionLevel: PermissionLevel.Write,
  inputSchema,
  permissionSubject: (input, ctx) => pathSubject(ctx, input.file_path, "write"),
  async execute(input, ctx) {
    const path = ctx.resolvePath(input.file_path);
    return withWriteTarget(path, async (target) => {
      const current = await readCurrent(target);
      const decoded = current && decodeText(current);
      if (current) requireFreshRead(ctx, target, current, decoded?.view);
      if (decoded) requireWritableEncoding(path, decoded);
      let format = decoded ? decoded.format : current ? DEFAULT_FORMAT : newFileFormat(target);
      const notes: string[] = [];
      if (unencodable(input.content, format.encoding).length > 0) {
        notes.push(`The content has characters ${format.encoding} cannot store, so the file is now UTF-8.`);
        format = DEFAULT_FORMAT;
      }
      const bytes = encodeText(input.content, format);
      const view = viewOf(input.content);
      notes.push(await writeAndRecord(ctx, target, current, bytes, view, { createParents: true }));
      const lines = lineCount(view);
      const verb = current ? "Updated" : "Created";
      const text = [`${verb} ${path} (${lines} ${lines === 1 ? "line" : "lines"}).`, ...notes]
        .filter((note) => note !== "")
        .join(" ");
      return ToolResult.success(text, { path: target, created: !current, lines, bytes: bytes.length });
    });
  },
});
