/**
 * The search run by ripgrep. Output is parsed from `--null` mode: every path ends in a NUL byte, so
 * colons, spaces and dashes in paths never confuse the parser, and the text after the NUL is rg's plain
 * `N:text` / `N-text` record — cheaper to produce and parse than `--json` (measured in bench/search.ts).
 */
import { type Dirent, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { InputError, ToolError } from "../core/errors.js";
import { GlobFilter } from "./globs.js";
import { mtimeOf, NewestOfSorted, newestOf, withSep } from "./mtime.js";
import { displayPath, displayPrefix } from "./paths.js";
import {
  type ContentQuery,
  type ContentResult,
  type FileLines,
  type FileQuery,
  type GrepQuery,
  MAX_LINE_CHARS,
  type NewestFiles,
  PROGRESS_EVERY_FILES,
  type SearchBackend,
  VCS_DIRS,
} from "./query.js";
import { runRipgrep } from "./ripgrep.js";

function baseArgs(query: FileQuery): string[] {
  // --no-config: a user's RIPGREP_CONFIG_PATH must not change what the tools return.
  const args = ["--no-config", "--hidden", "--null"];
  if (!query.respectIgnore) args.push("--no-ignore");
  for (const glob of query.globs) args.push("--glob", glob);
  // After the caller's globs: rg lets the last matching glob win, and VCS internals must stay out.
  for (const dir of VCS_DIRS) args.push("--glob", `!${dir}`);
  // Last: files permission rules forbid reading stay out whatever the caller's globs include.
  for (const glob of query.deniedGlobs ?? []) args.push("--glob", glob);
  return args;
}

function grepArgs(query: GrepQuery): string[] {
  const args = baseArgs(query);
  if (query.ignoreCase) args.push("--ignore-case");
  if (query.multiline) args.push("--multiline", "--multiline-dotall");
  if (query.type) args.push("--type", query.type);
  if (query.searchBinary) args.push("--binary");
  args.push("--regexp", query.pattern);
  return args;
}

/**
 * Where rg runs and what it is given. A directory is searched from inside (rg matches globs with a `/`
 * against paths relative to its cwd, and the model means them relative to `path`), and every printed
 * path gets the root's display prefix. A single file is passed by its display path.
 */
function invocation(args: string[], query: FileQuery): { args: string[]; cwd: string; prefix: string } {
  if (query.rootIsFile)
    return { args: [...args, "--", displayPath(query.cwd, query.root)], cwd: query.cwd, prefix: "" };
  return { args, cwd: query.root, prefix: displayPrefix(query.cwd, query.root) };
}

/** Turns rg's complaint into a message that says what to change. */
function failure(stderr: string): ToolError {
  const reason = stderr.replace(/^rg: /gm, "").trim();
  if (/regex parse error|error parsing regex/.test(reason)) {
    return new InputError(
      `The pattern is not a valid regular expression. ripgrep says:\n${reason}\n` +
        "Escape special characters with a backslash (e.g. \\( or \\.) to match them literally.",
    );
  }
  if (/not allowed in a regex/.test(reason)) {
    return new InputError("The pattern contains a line break: set multiline: true to match across lines.");
  }
  if (/unrecognized file type/.test(reason)) {
    return new InputError(
      `${reason}. Use a ripgrep type name such as js, ts, py, rust, go, java, md, or filter with \`glob\` instead.`,
    );
  }
  if (/glob/.test(reason)) return new InputError(`The glob is not valid: ${reason}`);
  return new ToolError(`ripgrep failed: ${reason || "no reason given"}`);
}

interface Collected {
  stopped: boolean;
}

async function run(
  binary: string,
  args: string[],
  query: FileQuery,
  onText: (text: string, prefix: string, stop: () => void) => void,
): Promise<Collected> {
  const decoder = new StringDecoder("utf8");
  let sawOutput = false;
  const how = invocation(args, query);
  const result = await runRipgrep(binary, how.args, {
    cwd: how.cwd,
    signal: query.signal,
    session: query.session,
    onData(chunk, stop) {
      sawOutput = true;
      onText(decoder.write(chunk), how.prefix, stop);
    },
  });
  const rest = decoder.end();
  if (rest) onText(rest, how.prefix, () => {});
  if (query.signal.aborted) throw new ToolError("The search was cancelled.");
  // Exit 2 with output means some files could not be read; the results found are still good. Without
  // output, entries that vanished mid-walk (another process's temp file or lock, or a directory of the
  // root passed by name, see splitRoot) hold nothing to list, and a walk that found no file to search (an
  // empty directory, every file left out by the globs or the rules) holds nothing either: an empty
  // result, as the built-in search gives, not a failure.
  if (result.code === 2 && !sawOutput && !result.stopped && !nothingToList(result.stderr)) {
    throw failure(result.stderr);
  }
  return { stopped: result.stopped };
}

/** rg's words when its walk found no file to search (two lines). */
const NOTHING_SEARCHED =
  /^(No files were searched, .*|Running with --debug will show why files are being skipped\.)$/;

/** True when every complaint of rg is about an entry that no longer exists, or that it searched nothing. */
function nothingToList(stderr: string): boolean {
  const lines = stderr
    .split("\n")
    .map((line) => line.replace(/^rg: /, "").trim())
    .filter((line) => line !== "");
  return (
    lines.length > 0 &&
    lines.every(
      (line) => /No such file or directory \(os error 2\)/.test(line) || NOTHING_SEARCHED.test(line),
    )
  );
}

/** Collects NUL-terminated paths (`--files`, `-l`), reporting progress as they arrive. */
async function paths(binary: string, args: string[], query: FileQuery): Promise<string[]> {
  const out: string[] = [];
  let pending = "";
  let nextReport = PROGRESS_EVERY_FILES;
  await run(binary, args, query, (text, prefix) => {
    const parts = (pending + text).split("\0");
    pending = parts.pop()!;
    for (const p of parts) {
      const path = prefix + p;
      // Left out here, not only after the run: the progress counts nothing the rules hide.
      if (query.exclude?.(path)) continue;
      out.push(path);
      query.onPath?.(path);
    }
    if (out.length >= nextReport) {
      query.onProgress?.(out.length);
      nextReport = out.length + PROGRESS_EVERY_FILES;
    }
  });
  return out;
}

/**
 * One `--sortr modified` listing: rg stats each file as it walks and prints the list newest first; only the
 * head of that list is kept (see NewestOfSorted), the rest is counted without being split into strings.
 */
async function sortedListing(
  binary: string,
  query: FileQuery,
  dirs: readonly string[],
  limit: number,
  onCount: (delta: number) => void,
): Promise<NewestOfSorted> {
  const head = new NewestOfSorted(query.cwd, limit);
  let pending = "";
  let counted = 0;
  const args = [
    ...baseArgs(query),
    "--files",
    "--sortr",
    "modified",
    ...(dirs.length > 0 ? ["--", ...dirs] : []),
  ];
  await run(binary, args, query, (chunk, prefix) => {
    const text = pending + chunk;
    let start = 0;
    for (let end = text.indexOf("\0"); end >= 0; end = text.indexOf("\0", start)) {
      if (head.wantsPaths || query.exclude) {
        const path = prefix + text.slice(start, end);
        if (!query.exclude?.(path)) {
          if (head.wantsPaths) head.add(path);
          else head.skip();
        }
      } else head.skip();
      start = end + 1;
    }
    pending = text.slice(start);
    onCount(head.size - counted);
    counted = head.size;
  });
  return head;
}

/** Most rg processes one listing is split over. */
const MAX_LISTING_SPLIT = 4;

/**
 * Sorting makes rg walk on one thread. When ignore files play no part (Glob lists ignored files too), the
 * root's directories can be listed by several rg processes at once, one per core, and their sorted heads
 * merged. Explicit paths bypass rg's globs, so the root's own entries are judged here, with the same glob
 * rules as the built-in search: excluded directories are not passed, top-level files are matched and
 * statted directly. Symlinks are skipped, as rg's walk skips them. Undefined when a split cannot help.
 */
function splitRoot(query: FileQuery): { groups: string[][]; files: string[] } | undefined {
  const parts = Math.min(availableParallelism(), MAX_LISTING_SPLIT);
  if (query.respectIgnore || query.rootIsFile || parts < 2) return undefined;
  let entries: Dirent[];
  try {
    entries = readdirSync(query.root, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const filter = new GlobFilter(query.globs);
  const dirs: string[] = [];
  const files: string[] = [];
  for (const entry of entries) {
    // A name that is not valid UTF-8 cannot be passed back to rg intact: list the root as one.
    if (entry.name.includes("\uFFFD")) return undefined;
    if (entry.isDirectory()) {
      if (
        !(VCS_DIRS as readonly string[]).includes(entry.name) &&
        filter.verdict(entry.name, true) !== "exclude"
      ) {
        dirs.push(entry.name);
      }
    } else if (entry.isFile() && filter.verdict(entry.name, false) !== "exclude") files.push(entry.name);
  }
  if (dirs.length < 2) return undefined;
  dirs.sort();
  const groups = Array.from({ length: Math.min(parts, dirs.length) }, (_, i) =>
    dirs.filter((_, k) => k % parts === i),
  );
  return { groups, files };
}

async function newestFiles(binary: string, query: FileQuery, limit: number): Promise<NewestFiles> {
  let total = 0;
  let nextReport = PROGRESS_EVERY_FILES;
  const onCount = (delta: number) => {
    total += delta;
    if (total >= nextReport) {
      query.onProgress?.(total);
      nextReport = total + PROGRESS_EVERY_FILES;
    }
  };
  const split = splitRoot(query);
  if (!split) {
    const head = await sortedListing(binary, query, [], limit, onCount);
    return { newest: head.newest(), total: head.size };
  }
  const heads = await Promise.all(
    split.groups.map((dirs) => sortedListing(binary, query, dirs, limit, onCount)),
  );
  const prefix = invocation([], query).prefix;
  const loose = { paths: [] as string[], times: [] as number[] };
  for (const name of split.files) {
    const path = prefix + name;
    const time = query.exclude?.(path) ? undefined : mtimeOf(withSep(query.root), name);
    if (time === undefined) continue;
    loose.paths.push(path);
    loose.times.push(time);
  }
  return {
    newest: newestOf([...heads.map((h) => h.head), loose], limit),
    total: heads.reduce((n, h) => n + h.size, loose.paths.length),
  };
}

/**
 * rg's notices about binary files, printed among the records without a NUL: `path: binary file matches
 * (...)` for a named binary file, and a warning after the lines shown from a file found binary part way.
 */
const BINARY_NOTICE =
  /^([^\0]*): (binary file matches|WARNING: stopped searching binary file after match) \(found "\\0" byte around offset \d+\)$/;

/**
 * Splits rg's `--null` output into `path\0rest\n` records, `--` break lines and binary notices as it streams
 * in. A path may itself hold a newline, so each record is found from its NUL, never by splitting lines first.
 */
class NulRecords {
  private pending = "";

  feed(
    text: string,
    onRecord: (path: string, rest: string) => void,
    onBreak: () => void,
    onBinaryMatch: (path: string) => void = () => {},
  ): void {
    const buffer = this.pending + text;
    let pos = 0;
    for (;;) {
      if (buffer.startsWith("--\n", pos)) {
        onBreak();
        pos += 3;
        continue;
      }
      const nul = buffer.indexOf("\0", pos);
      const lineEnd = buffer.indexOf("\n", pos);
      if (lineEnd < 0) break;
      // A line without a NUL is a notice, or the first line of a path that holds a newline.
      const notice = nul >= 0 && nul < lineEnd ? null : BINARY_NOTICE.exec(buffer.slice(pos, lineEnd));
      if (notice) {
        if (notice[2] === "binary file matches") onBinaryMatch(notice[1]!);
        pos = lineEnd + 1;
        continue;
      }
      const end = nul < 0 ? -1 : buffer.indexOf("\n", nul + 1);
      if (end < 0) break;
      onRecord(buffer.slice(pos, nul), buffer.slice(nul + 1, end));
      pos = end + 1;
    }
    this.pending = buffer.slice(pos);
  }
}

/**
 * Groups `N:text` / `N-text` records per file; rg writes each file's lines contiguously. The lines of a
 * file `exclude` leaves out (one rg opened because its exclude globs cannot express the rule) are dropped
 * as they come: counted towards the record limit, whether a hidden file matches would decide where the
 * search stops, and the note that says so would tell.
 */
class RecordParser {
  readonly files: FileLines[] = [];
  readonly binaryMatches: string[] = [];
  records = 0;
  private readonly stream = new NulRecords();
  private current: (FileLines & { rgPath: string }) | undefined;
  /** The file whose lines are being dropped. */
  private skipping: string | undefined;
  private breakPending = false;

  constructor(private readonly exclude?: (path: string) => boolean) {}

  feed(text: string, prefix: string): void {
    this.stream.feed(
      text,
      (path, record) => this.record(prefix, path, record),
      // A break between groups is only kept when the next line is from the same file.
      () => {
        this.breakPending = true;
      },
      (path) => {
        if (!this.exclude?.(prefix + path)) this.binaryMatches.push(prefix + path);
      },
    );
  }

  private record(prefix: string, path: string, record: string): void {
    if (this.skipping === path) return;
    if (this.current?.rgPath !== path) {
      if (this.exclude?.(prefix + path)) {
        this.skipping = path;
        return;
      }
      this.skipping = undefined;
      this.current = { path: prefix + path, rgPath: path, records: [] };
      this.files.push(this.current);
    } else if (this.breakPending) {
      this.current.records.push("--");
      this.records++;
    }
    this.breakPending = false;
    this.current.records.push(record);
    this.records++;
  }
}

export function ripgrepBackend(binary: string): SearchBackend {
  return {
    name: "ripgrep",
    newestFiles: (query, limit) => newestFiles(binary, query, limit),
    matchingFiles: (query) => paths(binary, [...grepArgs(query), "--files-with-matches"], query),

    async countMatches(query) {
      const counts: Array<[string, number]> = [];
      const stream = new NulRecords();
      const args = [...grepArgs(query), "--count", "--with-filename"];
      await run(binary, args, query, (text, prefix) => {
        stream.feed(
          text,
          (path, count) => counts.push([prefix + path, Number(count)]),
          () => {},
        );
      });
      return counts;
    },

    async matchingLines(query: ContentQuery): Promise<ContentResult> {
      const args = [...grepArgs(query), "--line-number", "--with-filename"];
      args.push("--max-columns", String(MAX_LINE_CHARS));
      if (query.before > 0) args.push("--before-context", String(query.before));
      if (query.after > 0) args.push("--after-context", String(query.after));
      if (query.onlyMatching) args.push("--only-matching");
      const parser = new RecordParser(query.exclude);
      let nextReport = PROGRESS_EVERY_FILES;
      const { stopped } = await run(binary, args, query, (text, prefix, stop) => {
        parser.feed(text, prefix);
        if (parser.records >= query.maxRecords) stop();
        if (parser.files.length >= nextReport) {
          query.onProgress?.(parser.files.length);
          nextReport = parser.files.length + PROGRESS_EVERY_FILES;
        }
      });
      return { files: parser.files, binaryMatches: parser.binaryMatches, cutShort: stopped };
    },
  };
}
