import { realpath, stat } from "node:fs/promises";
import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { type ContentBlock, ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { decodeText, looksLikeText, MAX_DECODED_FILE_BYTES } from "../../fs/codec.js";
import { giveBuffer, takeBuffer } from "../../fs/kept-buffer.js";
import { missingFileMessage } from "../../fs/missing-file.js";
import { pathSubject } from "../../fs/paths.js";
import { contentHash, type LineRange, readStateSlot } from "../../fs/read-state.js";
import { readBounded, specialFileKind } from "../../fs/regular-file.js";
import { binaryLabel, SNIFF_HEAD_BYTES, sniffKind } from "../../fs/sniff.js";
import { notebookBlocks, parseNotebook } from "./notebook.js";
import { imageForModel } from "./read-image.js";
import { textLines } from "./read-lines.js";
import {
  CHARS_PER_TOKEN,
  DEFAULT_LINE_LIMIT,
  MAX_OUTPUT_TOKENS_CEILING,
  outputTokenBudget,
  pageOf,
  windowLines,
} from "./read-page.js";
import { pdfText } from "./read-pdf.js";
import { readHead, streamWindow } from "./read-stream.js";

const inputSchema = z.strictObject({
  file_path: z
    .string()
    .describe("The file to read: an absolute path, or a path relative to the working directory."),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("The line number to start at (1-based). Use it with limit to page through a large file."),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(`How many lines to return (default ${DEFAULT_LINE_LIMIT}).`),
  pages: z
    .string()
    .optional()
    .describe('For PDF files only: the pages to read, such as "3", "1-5" or "1,4,7-9".'),
});

type ReadInput = z.output<typeof inputSchema>;

const description = `Reads a file from the local file system and returns its contents.

- Text comes back one line per output line as "<line number><tab><text>", numbered from 1. Lines over 2000 characters are cut.
- By default up to ${DEFAULT_LINE_LIMIT} lines from the start of the file. For a large file, the result ends with the exact offset and limit of the next page; use offset and limit to read a part you already know you need.
- Images (PNG, JPEG, GIF, WebP) are returned as images you can see; very large ones are scaled down.
- PDFs return their text page by page (up to 20 pages per call; choose pages with "pages").
- Jupyter notebooks (.ipynb) return every cell with its id, type, source and outputs.
- Reading a file is required before Write or Edit may change it; a partial read is enough.
- To list a directory, use Glob or Bash (ls) instead.`;

function textNote(note: string): string {
  return `<system-reminder>${note}</system-reminder>`;
}

function binaryError(path: string, head: Buffer): InputError {
  return new InputError(
    `${path} is binary (${binaryLabel(path, head.subarray(0, SNIFF_HEAD_BYTES))}), not text. Read shows text, ` +
      "images (png, jpg, gif, webp), PDFs and notebooks; inspect other files with Bash (e.g. file, xxd, unzip -l).",
  );
}

function pastEndNote(path: string, lineCount: number, offset: number): string {
  return textNote(
    `${path} has ${lineCount} lines, so offset ${offset} is past its end. Use an offset from 1 to ${lineCount}.`,
  );
}

/**
 * A page of a text file read whole; `preface` goes before the numbered lines (a note on why a file is
 * shown as plain text). The bytes are hashed for read-state after the result has gone
 * (ReadState.recordReadLater), and `done` runs then: the bytes must not change until it has.
 */
function readText(
  path: string,
  bytes: Buffer,
  input: ReadInput,
  ctx: ToolCallContext,
  preface = "",
  done?: () => void,
): ToolResult {
  let recorded = false;
  const state = ctx.session.get(readStateSlot);
  const record: RecordRead = (view, range) => {
    recorded = true;
    state.recordReadLater(path, bytes, view, range, done);
  };
  try {
    return textPage(path, bytes, input, ctx, preface, record);
  } catch (error) {
    // Not recorded: nothing will hash the bytes, so they are done with now.
    if (!recorded) done?.();
    throw error;
  }
}

type RecordRead = (view: string | undefined, range?: LineRange) => void;

function textPage(
  path: string,
  bytes: Buffer,
  input: ReadInput,
  ctx: ToolCallContext,
  preface: string,
  record: RecordRead,
): ToolResult {
  const text = textLines(bytes);
  if (!text) {
    // Recorded all the same: a binary file the model has looked at may be overwritten with Write.
    record(undefined);
    throw binaryError(path, bytes);
  }
  const { format, count, view } = text;
  const metadata = {
    path,
    totalLines: count,
    encoding: format.encoding,
    bom: format.bom,
    eol: format.eol,
  };
  if (count === 0) {
    record(view, [1, 1]);
    return ToolResult.success(textNote(`${path} exists but is empty.`), metadata);
  }
  const offset = Math.max(1, input.offset ?? 1);
  if (offset > count) {
    record(view, [count, count]);
    return ToolResult.success(pastEndNote(path, count, offset), metadata);
  }
  const wholeFile = input.offset === undefined && input.limit === undefined;
  const page = pageOf(text.window(offset, windowLines(input.limit)), {
    offset,
    limit: input.limit,
    wholeFile,
    tokenBudget: outputTokenBudget(ctx),
  });
  record(view, [page.first, page.last]);
  const next = page.next
    ? `\n\n[Lines ${page.first}-${page.last} of ${count} shown. For the next page, Read with offset ${page.next.offset} and limit ${page.next.limit}.]`
    : "";
  return ToolResult.success(preface + page.text + next, { ...metadata, lines: [page.first, page.last] });
}

async function readContent(path: string, input: ReadInput, ctx: ToolCallContext): Promise<ToolResult> {
  const bytes = await readBounded(path, MAX_DECODED_FILE_BYTES, takeBuffer);
  if (!bytes) {
    // Only files whose size stat underreports (in /proc, say) get here; the rest were paged from a stream.
    throw new ToolError(
      `${path} holds more than ${MAX_DECODED_FILE_BYTES} bytes although stat reports less; read parts of it with Bash (head, tail, sed -n).`,
    );
  }
  const kind = sniffKind(path, bytes.subarray(0, SNIFF_HEAD_BYTES));
  if (input.pages !== undefined && kind.kind !== "pdf") {
    throw new InputError(
      `pages applies only to PDF files, and ${path} is not one. Use offset and limit for text.`,
    );
  }
  const record = (view?: string) => ctx.session.get(readStateSlot).recordRead(path, contentHash(bytes), view);
  switch (kind.kind) {
    case "image": {
      const image = await imageForModel(path, bytes, kind.mediaType);
      record();
      const blocks: ContentBlock[] = image.note
        ? [...image.blocks, { type: "text", text: image.note }]
        : image.blocks;
      return ToolResult.success(blocks, { path, mediaType: kind.mediaType });
    }
    case "pdf": {
      const pdf = await pdfText(path, bytes, input.pages);
      record();
      return ToolResult.success(pdf.text, { path, totalPages: pdf.totalPages });
    }
    case "notebook": {
      const text = decodeText(bytes)?.view ?? "";
      let notebook: ReturnType<typeof parseNotebook>;
      try {
        notebook = parseNotebook(text, path);
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        // A broken notebook (a merge conflict, a cut-off save) is shown as text and counts as read, so
        // Write can repair it; refusing to show it would leave only Bash.
        const note = `${error.message} It is shown as plain text; repair it with Write (NotebookEdit needs a valid notebook).`;
        return readText(path, bytes, input, ctx, `${textNote(note)}\n`);
      }
      record(text);
      return ToolResult.success(notebookBlocks(notebook), { path, cells: notebook.cells.length });
    }
    case "text":
      // The page is built from copies of the bytes: once they are hashed, the buffer can serve the next
      // large read (the Edit that usually follows) instead of waiting for the garbage collector beside a
      // second one.
      return readText(path, bytes, input, ctx, "", () => giveBuffer(bytes));
  }
}

/**
 * A text file too large to decode whole, paged from a stream. It is not recorded as read: Write and
 * Edit do not take files this large, and the note says how to change it instead.
 */
async function readLargeText(
  path: string,
  size: number,
  input: ReadInput,
  ctx: ToolCallContext,
): Promise<ToolResult> {
  const head = await readHead(path);
  const kind = sniffKind(path, head);
  if (kind.kind !== "text") {
    throw new ToolError(
      `${path} is a ${kind.kind} of ${size} bytes, more than Read handles (${MAX_DECODED_FILE_BYTES} bytes).`,
    );
  }
  if (input.pages !== undefined)
    throw new InputError(`pages applies only to PDF files, and ${path} is not one.`);
  if (!looksLikeText(head)) throw binaryError(path, head);
  const offset = Math.max(1, input.offset ?? 1);
  const { window, linesSeen } = await streamWindow(path, head, offset, input.limit);
  if (window.lines.length === 0) return ToolResult.success(pastEndNote(path, linesSeen, offset), { path });
  const wholeFile = input.offset === undefined && input.limit === undefined;
  const page = pageOf(window, { offset, limit: input.limit, wholeFile, tokenBudget: outputTokenBudget(ctx) });
  const next = page.next
    ? ` For the next page, Read with offset ${page.next.offset} and limit ${page.next.limit}.`
    : "";
  const note =
    `\n\n[Lines ${page.first}-${page.last} shown of a ${size}-byte file, too large to count its lines or to change ` +
    `with Edit or Write (use Bash, e.g. sed -i, for that).${next}]`;
  return ToolResult.success(page.text + note, { path, lines: [page.first, page.last], streamed: true });
}

export const readTool = defineTool({
  name: ToolName.Read,
  description,
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema,
  // Read pages its own output; this only stops notebooks with huge outputs.
  maxResultChars: MAX_OUTPUT_TOKENS_CEILING * CHARS_PER_TOKEN,
  permissionSubject: (input, ctx) => pathSubject(ctx, input.file_path, "read"),
  async execute(input, ctx) {
    const requested = ctx.resolvePath(input.file_path);
    const info = await stat(requested).catch(() => undefined);
    if (!info) throw new ToolError(await missingFileMessage(requested, ctx.workingDir));
    if (info.isDirectory()) {
      throw new InputError(
        `${requested} is a directory, not a file. List it with Glob (pattern "*", path "${requested}") or with Bash (ls).`,
      );
    }
    const special = specialFileKind(info);
    if (special) {
      throw new InputError(
        `${requested} is ${special}, not a regular file: reading it could wait forever or never end. ` +
          "Read takes regular files only; sample it with Bash (e.g. head -c 1000) if that is what you need.",
      );
    }
    // Read-state is keyed by the real file, so reading through a symlink counts for an edit of its target.
    const path = await realpath(requested);
    if (info.size > MAX_DECODED_FILE_BYTES) return readLargeText(path, info.size, input, ctx);
    return readContent(path, input, ctx);
  },
});
