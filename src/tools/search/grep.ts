import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { byCodeUnits } from "../../core/order.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { hiddenFromSearch } from "../../permissions/read-restriction.js";
import { prestartForSearch } from "../../process/prestart.js";
import { searchBackendHiding, unsearchedNote } from "../../search/backend.js";
import { contentPage, formatCounts, formatFiles, type Page, pageNote } from "../../search/format.js";
import { NewestFirst } from "../../search/mtime.js";
import type { GrepQuery, SearchBackend } from "../../search/query.js";
import { searchRoot } from "../../search/root.js";

/** Entries (files, lines or counts) shown when head_limit is not given. */
const DEFAULT_HEAD_LIMIT = 250;
/**
 * Content mode collects whole results to show them in a stable order (by path; rg's own order varies
 * run to run), so pages do not shift. Past this many lines it stops and says the results are partial.
 */
const MAX_CONTENT_RECORDS = 50_000;
/** The look for skipped files after an empty search gives up after this long. */
const SKIPPED_PROBE_MS = 3_000;
/** Skipped files named as examples. */
const SKIPPED_EXAMPLES = 3;

const inputSchema = z.strictObject({
  pattern: z.string().min(1).describe("Regular expression to search for (ripgrep syntax)."),
  path: z.string().optional().describe("File or directory to search; defaults to the working directory."),
  glob: z
    .string()
    .optional()
    .describe('Only search files matching these globs, e.g. "*.ts", "*.{ts,tsx}" or "src/** !*.test.ts".'),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .optional()
    .describe(
      "files_with_matches (default): paths, newest first. content: matching lines. count: matches per file.",
    ),
  "-B": z.number().int().min(0).optional().describe("Lines of context before each match (content mode)."),
  "-A": z.number().int().min(0).optional().describe("Lines of context after each match (content mode)."),
  "-C": z.number().int().min(0).optional().describe("Lines of context around each match (content mode)."),
  context: z.number().int().min(0).optional().describe("Same as -C."),
  "-n": z.boolean().optional().describe("Show line numbers in content mode (default true)."),
  "-i": z.boolean().optional().describe("Case-insensitive search."),
  "-o": z.boolean().optional().describe("Show only the matched parts of lines (content mode)."),
  type: z.string().optional().describe("ripgrep file type to search, e.g. js, ts, py, rust, go, java."),
  head_limit: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(`Show at most this many entries (default ${DEFAULT_HEAD_LIMIT}; 0 = all).`),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Skip this many entries first, to page through results."),
  multiline: z.boolean().optional().describe("Let the pattern span lines; `.` then matches newlines too."),
});

type Input = z.output<typeof inputSchema>;

/** Splits `glob` into globs at whitespace and at commas outside braces (`*.{ts,tsx}` stays whole). */
export function splitGlobs(glob: string | undefined): string[] {
  if (!glob) return [];
  const out: string[] = [];
  let current = "";
  let depth = 0;
  for (const ch of glob) {
    if (ch === "{") depth++;
    else if (ch === "}") depth = Math.max(0, depth - 1);
    if ((ch === "," && depth === 0) || /\s/.test(ch)) {
      if (current) out.push(current);
      current = "";
    } else current += ch;
  }
  if (current) out.push(current);
  return out;
}

/** Files an empty search skipped that do match: ignored ones and binary ones, each probed separately. */
async function skippedNote(backend: SearchBackend, query: GrepQuery, signal: AbortSignal): Promise<string> {
  const probeSignal = AbortSignal.any([signal, AbortSignal.timeout(SKIPPED_PROBE_MS)]);
  const probe = (overrides: Partial<GrepQuery>) =>
    backend
      .matchingFiles({ ...query, ...overrides, signal: probeSignal, onProgress: undefined })
      .catch(() => []);
  const [ignored, binary] = await Promise.all([
    probe({ respectIgnore: false }),
    probe({ searchBinary: true }),
  ]);
  const examples = (files: string[]) =>
    files.slice(0, SKIPPED_EXAMPLES).join(", ") + (files.length > SKIPPED_EXAMPLES ? ", ..." : "");
  const notes: string[] = [];
  if (ignored.length > 0) {
    notes.push(
      `${ignored.length} ignored ${ignored.length === 1 ? "file matches" : "files match"} (by .gitignore or similar): ` +
        `${examples(ignored)}. To search one, set path to that file or to its ignored directory.`,
    );
  }
  if (binary.length > 0) {
    notes.push(
      `${binary.length} binary ${binary.length === 1 ? "file matches" : "files match"}: ${examples(binary)}. ` +
        "Grep skips binary files; to search one anyway run `rg --text PATTERN FILE` with Bash.",
    );
  }
  return notes.length > 0 ? `\n\nSkipped files that would match:\n${notes.join("\n")}` : "";
}

async function execute(input: Input, ctx: ToolCallContext): Promise<ToolResult> {
  const backend = await searchBackendHiding(hiddenFromSearch(ctx, "Grep"));
  let result: ToolResult;
  try {
    result = await search(input, ctx, backend);
  } finally {
    // rg may have run in the session's waiting shell (also when it then failed): the next command gets another.
    prestartForSearch(ctx);
  }
  const note = unsearchedNote(backend);
  const [first, ...rest] = result.content;
  if (!note || first?.type !== "text") return result;
  return { ...result, content: [{ ...first, text: first.text + note }, ...rest] };
}

async function search(input: Input, ctx: ToolCallContext, backend: SearchBackend): Promise<ToolResult> {
  const { root, isFile } = await searchRoot(ctx, input.path, "Grep", "file or directory");
  const query: GrepQuery = {
    cwd: ctx.workingDir,
    root,
    rootIsFile: isFile,
    globs: splitGlobs(input.glob),
    respectIgnore: true,
    signal: ctx.signal,
    session: ctx.session,
    onProgress: (n) => ctx.reportProgress({ progress: n, message: `${n} files with matches so far` }),
    pattern: input.pattern,
    ignoreCase: input["-i"] ?? false,
    multiline: input.multiline ?? false,
    type: input.type,
    searchBinary: false,
  };
  const page: Page = { offset: input.offset ?? 0, limit: input.head_limit ?? DEFAULT_HEAD_LIMIT };
  const mode = input.output_mode ?? "files_with_matches";
  const metadata = { backend: backend.name };

  if (mode === "files_with_matches") {
    const byTime = new NewestFirst(ctx.workingDir);
    await backend.matchingFiles({ ...query, onPath: byTime.add });
    if (byTime.size === 0) {
      return ToolResult.success(`No files found${await skippedNote(backend, query, ctx.signal)}`, metadata);
    }
    const needed = page.limit === 0 ? byTime.size : page.offset + page.limit;
    return ToolResult.success(formatFiles(byTime.newest(needed), byTime.size, page), {
      ...metadata,
      matches: byTime.size,
    });
  }

  if (mode === "count") {
    const counts = (await backend.countMatches(query)).sort(([a], [b]) => byCodeUnits(a, b));
    if (counts.length === 0) {
      return ToolResult.success(`No matches found${await skippedNote(backend, query, ctx.signal)}`, metadata);
    }
    return ToolResult.success(formatCounts(counts, page), { ...metadata, matches: counts.length });
  }

  const around = input.context ?? input["-C"] ?? 0;
  const before = input["-B"] ?? around;
  const after = input["-A"] ?? around;
  const onlyMatching = input["-o"] ?? false;
  const result = await backend.matchingLines({
    ...query,
    before,
    after,
    onlyMatching,
    maxRecords: Math.max(MAX_CONTENT_RECORDS, page.limit === 0 ? 0 : page.offset + page.limit + 1),
  });
  const binaryNote =
    result.binaryMatches.length === 0
      ? ""
      : `${result.files.length > 0 ? "\n\n" : ""}(Binary ${result.binaryMatches.length === 1 ? "file" : "files"} ` +
        `${result.binaryMatches.join(", ")} ${result.binaryMatches.length === 1 ? "matches" : "match"}; ` +
        "Grep does not show lines of binary files. To see them run `rg --text PATTERN FILE` with Bash.)";
  if (result.files.length === 0) {
    if (binaryNote) return ToolResult.success(binaryNote, metadata);
    return ToolResult.success(`No matches found${await skippedNote(backend, query, ctx.signal)}`, metadata);
  }
  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const { lines, total } = contentPage(result.files, page, {
    showPath: !isFile,
    lineNumbers: input["-n"] ?? true,
    breakBetweenFiles: !onlyMatching && (before > 0 || after > 0),
  });
  const cutShort = result.cutShort
    ? `\n\n(At least ${total} lines match; the search stopped collecting there. Page on with offset, or narrow the pattern, path or glob to reach lines past that.)`
    : "";
  const note = pageNote("lines", page, lines.length, result.cutShort ? undefined : total);
  return ToolResult.success(`${lines.join("\n")}${note}${cutShort}${binaryNote}`, {
    ...metadata,
    lines: total,
  });
}

export const grepTool = defineTool({
  name: ToolName.Grep,
  description:
    "Searches file contents with ripgrep. Takes a regular expression (ripgrep syntax: escape literal " +
    "braces and parentheses, e.g. `interface\\{\\}`). Respects .gitignore, searches hidden files, skips " +
    ".git and binary files, and replaces lines over 500 characters with a marker.\n" +
    "- output_mode files_with_matches (default) lists matching files newest first; content shows matching " +
    "lines as path:line:text (context lines with -A/-B/-C as path-line-text); count gives matches per file.\n" +
    '- Filter with glob (e.g. "*.ts" or "*.{ts,tsx}") or type (e.g. "py"); -i ignores case; multiline ' +
    "lets a pattern span lines.\n" +
    `- Results are paged: head_limit (default ${DEFAULT_HEAD_LIMIT}, 0 = all) and offset.\n` +
    "Use Grep rather than grep or rg through Bash: its results are paged and its paths are relative.",
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema,
  isConcurrencySafe: () => true,
  permissionSubject: (input, ctx) => ({
    kind: "path",
    path: ctx.resolvePath(input.path ?? "."),
    access: "read",
  }),
  execute: (input, ctx) => execute(input, ctx),
});
