import { extname } from "node:path";
import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import { once } from "../../core/once.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import {
  applySplices,
  type DecodedText,
  decodeText,
  encodeText,
  isPlainUtf8,
  type Splice,
  splicePieces,
  unencodable,
  viewOf,
} from "../../fs/codec.js";
import { newFileFormat } from "../../fs/editorconfig.js";
import { firstTwoOccurrences } from "../../fs/find-bytes.js";
import { missingFileMessage } from "../../fs/missing-file.js";
import { pathSubject } from "../../fs/paths.js";
import { contentHashBetweenTurns, keepsSnapshot } from "../../fs/read-state.js";
import { type ChangeSummary, CONTEXT_WINDOW_LINES, summariseChanges } from "./change-summary.js";
import {
  findEdit,
  type LadderResult,
  MAX_LISTED_MATCHES,
  RUNG_DESCRIPTIONS,
  type Rung,
} from "./edit-ladder.js";
import {
  readCurrent,
  requireFreshRead,
  requireWritableEncoding,
  withWriteTarget,
  writeAndRecord,
} from "./guard.js";
import { nearMissHint } from "./near-miss.js";

const inputSchema = z.strictObject({
  file_path: z
    .string()
    .describe("The file to change: an absolute path, or a path relative to the working directory."),
  old_string: z
    .string()
    .describe(
      "The exact text to replace, as it appears in the file (without the line-number prefixes Read shows). " +
        "Include enough surrounding lines to make it unique. Empty only to create a new file.",
    ),
  new_string: z.string().describe("The text to put in its place; must differ from old_string."),
  replace_all: z
    .boolean()
    .default(false)
    .describe(
      "Replace every occurrence of old_string instead of requiring exactly one (e.g. to rename a variable).",
    ),
});

type EditInput = z.output<typeof inputSchema>;

/** Characters an encoding refusal names. */
const MAX_LISTED_CHARS = 5;

const description = `Replaces text in a file: old_string becomes new_string.

- Read the file first in this session (a partial read is enough); an edit of a file that changed since is refused and the change is shown.
- old_string must match the file exactly and occur once, unless replace_all is true. Copy it from Read output without the "<number><tab>" prefix.
- When there is no exact match, one kind of copying drift at a time is forgiven, and only when the text then matches in exactly one place: CRLF line endings, trailing whitespace, a uniform indentation shift, spaces typed for tabs (or tabs for spaces), curly versus straight quotes, plain ASCII typed for no-break spaces, dashes and the ellipsis character, composed versus decomposed accented letters (Unicode NFC/NFD), and copied line-number prefixes. The result says which one applied.
- After such a match, the text new_string keeps from old_string stays as the file has it (trailing spaces, indentation, dashes, quotes), lines new_string adds are indented with the file's characters (tabs stay tabs), and no final newline is added to a file that lacks one.
- When nothing matches, the error shows the closest text in the file and how old_string differs from it.
- The file keeps its encoding and line endings; only the replaced text changes.
- An empty old_string creates a new file with new_string as its content.
- For Jupyter notebooks (.ipynb) use NotebookEdit.`;

function refusal(
  result: Exclude<LadderResult, { ok: true }>,
  path: string,
  view: string,
  oldString: string,
  replaceAll: boolean,
): InputError {
  if (result.reason === "ambiguous") {
    const exact = result.rung === "exact";
    const how = exact ? "" : ` (after ${RUNG_DESCRIPTIONS[result.rung]})`;
    const count =
      result.lines.length > MAX_LISTED_MATCHES ? `more than ${MAX_LISTED_MATCHES}` : result.lines.length;
    // Overlapping matches ("aa" twice in "aaa") share a line, which is listed once.
    const listed = [...new Set(result.lines.slice(0, MAX_LISTED_MATCHES))];
    const instead = exact
      ? "or set replace_all to change every occurrence"
      : replaceAll
        ? "replace_all applies only to exact matches, so copy old_string exactly from the file"
        : "or copy old_string exactly from the file and set replace_all to change every occurrence";
    return new InputError(
      `old_string matches ${count} places in ${path}${how}, at ${listed.length === 1 ? "line" : "lines"} ` +
        `${listed.join(", ")}. Nothing was changed. Add surrounding lines to old_string ` +
        `so it matches only the place you mean, ${instead}.`,
    );
  }
  if (result.reason === "unusable") {
    return new InputError(
      `old_string matched one place in ${path} after ${RUNG_DESCRIPTIONS[result.rung]}, but ${result.message}. Nothing was changed.`,
    );
  }
  const hint = nearMissHint(view, oldString);
  const shown = oldString.length > 400 ? `${oldString.slice(0, 400)}...` : oldString;
  return new InputError(
    `old_string was not found in ${path}, not even allowing for line endings, trailing whitespace, indentation, ` +
      `tabs for spaces, quotes, look-alike dashes and spaces, Unicode forms or line-number prefixes. Nothing was changed.\nold_string:\n${shown}\n${hint ?? "No similar text was found: Read the file to see its current content."}`,
  );
}

/** Edit of a file that does not exist: only an empty old_string (create) makes sense. */
async function createFile(
  path: string,
  target: string,
  input: EditInput,
  ctx: ToolCallContext,
): Promise<ToolResult> {
  if (input.old_string !== "") throw new ToolError(await missingFileMessage(path, ctx.workingDir));
  const bytes = encodeText(input.new_string, newFileFormat(target));
  await writeAndRecord(ctx, target, undefined, bytes, viewOf(input.new_string), {
    createParents: true,
  });
  // A file just created has no other links, so the write has nothing to add.
  return ToolResult.success(`Created ${path} with the new_string as its content.`, {
    path: target,
    created: true,
  });
}

/** The splices an edit makes to an existing file, or a refusal that says why there are none. */
function plan(path: string, decoded: DecodedText, input: EditInput): { rung: Rung; splices: Splice[] } {
  if (input.old_string === "") {
    if (decoded.view !== "") {
      throw new InputError(
        `old_string is empty, but ${path} is not: an empty old_string only creates a file. Give the text to replace, or use Write to replace the whole file.`,
      );
    }
    return { rung: "exact", splices: [{ start: 0, end: 0, text: input.new_string }] };
  }
  const result = findEdit(decoded.view, input.old_string, input.new_string, input.replace_all);
  if (!result.ok) throw refusal(result, path, decoded.view, input.old_string, input.replace_all);
  return result;
}

/** What an edit of an existing file changes, however it was found. */
interface Change {
  rung: Rung;
  replacements: number;
  /** The new content, in order: views of the current bytes between the new text. */
  pieces: Buffer[];
  /** What the result shows of the change: computed once, while the new content syncs to disk. */
  summary: () => ChangeSummary;
  /** The new view, for the read-state: built only when it would be kept (small files). */
  newView: () => string | undefined;
}

/** The edit of a decoded file: the whole ladder of matches, and splices in any encoding. */
function decodedChange(path: string, decoded: DecodedText, input: EditInput): Change {
  requireWritableEncoding(path, decoded);
  const { rung, splices } = plan(path, decoded, input);
  const foreign = unencodable(splices.map((s) => s.text).join(""), decoded.format.encoding);
  if (foreign.length > 0) {
    // Converting the whole file would change every non-ASCII byte outside the edit, so it is the caller's call.
    throw new InputError(
      `${path} is ${decoded.format.encoding}-encoded and cannot store ${foreign.slice(0, MAX_LISTED_CHARS).join(" ")} from new_string. ` +
        "Nothing was changed. Spell them with characters the file has (or an escape its language allows), " +
        "or rewrite the whole file with Write, which converts it to UTF-8.",
    );
  }
  const newLength = decoded.view.length + splices.reduce((n, s) => n + s.text.length - (s.end - s.start), 0);
  return {
    rung,
    replacements: splices.length,
    pieces: splicePieces(decoded, splices),
    summary: once(() => summariseChanges(decoded.view, splices)),
    newView: () => (keepsSnapshot(newLength) ? applySplices(decoded.view, splices) : undefined),
  };
}

const LF = 0x0a;
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Start of the line `lines` lines above the one holding byte `at`. */
function lineStartAbove(bytes: Buffer, at: number, lines: number): number {
  let start = at === 0 ? 0 : bytes.lastIndexOf(LF, at - 1) + 1;
  for (let i = 0; i < lines && start > 0; i++) start = start === 1 ? 0 : bytes.lastIndexOf(LF, start - 2) + 1;
  return start;
}

/** End (its LF, or the end of the file) of the line `lines` lines below the one holding byte `at`. */
function lineEndBelow(bytes: Buffer, at: number, lines: number): number {
  let end = bytes.indexOf(LF, at);
  for (let i = 0; i < lines && end !== -1; i++) end = bytes.indexOf(LF, end + 1);
  return end === -1 ? bytes.length : end;
}

function countLf(bytes: Buffer, end: number): number {
  let n = 0;
  for (let i = bytes.indexOf(LF); i !== -1 && i < end; i = bytes.indexOf(LF, i + 1)) n++;
  return n;
}

/** The view of content given as UTF-8 pieces, when the read-state would keep it; else undefined unbuilt. */
function keptView(pieces: readonly Buffer[]): string | undefined {
  const length = pieces.reduce((n, p) => n + p.length, 0);
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so longer content has too many characters to keep.
  if (!keepsSnapshot(Math.ceil(length / 3))) return undefined;
  const view = Buffer.concat(pieces).toString("utf8");
  return keepsSnapshot(view.length) ? view : undefined;
}

/**
 * The common case, found in the bytes: a plain UTF-8 file (isPlainUtf8: its view is its UTF-8 text) and
 * an old_string that occurs in it exactly once. The file is not decoded (for 10 MiB, 10 M characters of
 * text and the scans over them); only the lines around the change are, for its summary. Undefined when
 * this does not apply; the caller then decodes and runs the whole ladder, whose exact rung finds what
 * this finds when there is a match, so the result does not depend on which way was taken.
 */
function plainExactChange(bytes: Buffer, input: EditInput): Change | undefined {
  // A lone surrogate has no UTF-8 form (Buffer.from writes U+FFFD for it), so it is not searched as bytes.
  if (input.replace_all || input.old_string === "" || LONE_SURROGATE.test(input.old_string)) return undefined;
  const needle = Buffer.from(input.old_string, "utf8");
  // Overlapping occurrences count, as in the ladder ("aa" twice in "aaa").
  const [at, second] = firstTwoOccurrences(bytes, needle);
  if (at === -1 || second !== -1) return undefined;
  const end = at + needle.length;
  // As spliceBytes does in an LF file: CRLFs in new_string become LFs.
  const pieces = [
    bytes.subarray(0, at),
    Buffer.from(input.new_string.replaceAll("\r\n", "\n"), "utf8"),
    bytes.subarray(end),
  ];
  const summary = () => {
    const from = lineStartAbove(bytes, at, CONTEXT_WINDOW_LINES);
    const window = bytes.toString("utf8", from, lineEndBelow(bytes, end, CONTEXT_WINDOW_LINES));
    const start = bytes.toString("utf8", from, at).length;
    const splice = { start, end: start + input.old_string.length, text: input.new_string };
    return summariseChanges(window, [splice], 1 + countLf(bytes, from));
  };
  return {
    rung: "exact",
    replacements: 1,
    pieces,
    summary: once(summary),
    newView: () => keptView(pieces),
  };
}

export const editTool = defineTool({
  name: ToolName.Edit,
  description,
  permissionLevel: PermissionLevel.Write,
  inputSchema,
  permissionSubject: (input, ctx) => pathSubject(ctx, input.file_path, "write"),
  async execute(input, ctx) {
    const path = ctx.resolvePath(input.file_path);
    if (extname(path).toLowerCase() === ".ipynb") {
      throw new InputError(`${path} is a Jupyter notebook: change its cells with NotebookEdit, not Edit.`);
    }
    if (input.old_string === input.new_string) {
      throw new InputError("old_string and new_string are the same, so there is nothing to change.");
    }
    return withWriteTarget(path, async (target) => {
      const current = await readCurrent(target);
      if (!current) return createFile(path, target, input, ctx);
      const plain = isPlainUtf8(current);
      let decoded = plain ? undefined : decodeText(current);
      if (!plain && !decoded)
        throw new InputError(`${path} is binary, not text; Edit changes text files only.`);
      // A plain file is decoded only when it must be: to show a change on disk, or for the ladder.
      const decode = () => (decoded ??= decodeText(current)!);
      const fresh = (hash?: string) => requireFreshRead(ctx, target, current, () => decode().view, hash);
      let change: Change;
      try {
        change =
          (plain ? plainExactChange(current, input) : undefined) ?? decodedChange(path, decode(), input);
      } catch (error) {
        // A file changed since it was read is the reason to give, not what the change found in it.
        fresh();
        throw error;
      }
      // The freshness check hashes the current bytes (11 ms for 12.5 MB): a slice at a time while the new
      // content is written and synced, which wait on the disk, not on this thread. The verdict and the
      // change's summary still come before the new content replaces the file.
      const currentHash = contentHashBetweenTurns(current);
      const note = await writeAndRecord(ctx, target, current, change.pieces, change.newView(), {
        whileSyncing: async () => {
          change.summary();
          fresh(await currentHash);
        },
      });
      const { rung, replacements } = change;
      const summary = change.summary();
      const what = !input.replace_all
        ? "replaced 1 occurrence"
        : replacements === 1
          ? "replaced all occurrences (there was 1)"
          : `replaced all ${replacements} occurrences`;
      const how = rung === "exact" ? "" : ` Matched after ${RUNG_DESCRIPTIONS[rung]}.`;
      return ToolResult.success(
        `Updated ${path}: ${what}.${how}${note && ` ${note}`} The changed lines now read:\n${summary.excerpt}`,
        {
          path: target,
          rung,
          replacements,
          patch: { hunks: summary.hunks },
        },
      );
    });
  },
});
