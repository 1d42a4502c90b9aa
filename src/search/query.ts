import type { Session } from "../core/session.js";
/**
 * What a search asks for, independent of who runs it: ripgrep (src/search/rg-backend.ts) or the built-in
 * TypeScript search (src/search/builtin-backend.ts). Both return the same records, so the tools format
 * one way and the test suite runs unchanged against either.
 */

/** Version-control directories never listed or searched: their internals are noise to a model. */
export const VCS_DIRS = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"] as const;

/** Lines longer than this are replaced by a marker (minified files would swamp the result). */
export const MAX_LINE_CHARS = 500;
export const OMITTED_MATCH_LINE = "[Omitted long matching line]";
export const OMITTED_CONTEXT_LINE = "[Omitted long context line]";

/** How often (in files) a long search reports progress. */
export const PROGRESS_EVERY_FILES = 1_000;

export interface FileQuery {
  /** Paths under this directory are shown relative to it; others absolute. */
  cwd: string;
  /** Absolute file or directory to search. */
  root: string;
  rootIsFile: boolean;
  /** ripgrep-style globs; a leading `!` excludes. */
  globs: readonly string[];
  /** False lists ignored files too (Glob does, as Claude Code's does). */
  respectIgnore: boolean;
  signal: AbortSignal;
  onProgress?(filesSoFar: number): void;
  /** Called with each path as soon as it is found (matchingFiles), to overlap work. */
  onPath?(path: string): void;
  /**
   * Display paths to leave out entirely (files permission rules forbid reading): not shown, not counted,
   * and for a content search never opened.
   */
  exclude?(path: string): boolean;
  /** The same files as exclude globs for ripgrep (`!glob`, relative to root), so rg never opens them. */
  deniedGlobs?: readonly string[];
  /** The calling session: ripgrep starts in its waiting shell where it fits (src/process/prestart.ts). */
  session?: Session;
}

export interface GrepQuery extends FileQuery {
  pattern: string;
  ignoreCase: boolean;
  /** Patterns may span lines and `.` matches newlines. */
  multiline: boolean;
  type?: string;
  /** Search files that look binary too (used to tell the model what was skipped). */
  searchBinary: boolean;
}

export interface ContentQuery extends GrepQuery {
  before: number;
  after: number;
  onlyMatching: boolean;
  /** Stop collecting after this many line records (the search is then reported as cut short). */
  maxRecords: number;
}

/**
 * One file's output lines in ripgrep's own `-n` form: `N:text` for a matching line, `N-text` for a context
 * line, `--` for a break between non-adjacent groups. Strings, not objects: thousands of them are kept.
 */
export interface FileLines {
  path: string;
  records: string[];
}

export interface ContentResult {
  files: FileLines[];
  /**
   * Binary files that match but whose lines are not shown: only an explicitly named file is searched when
   * binary (as rg does), and its lines would be noise.
   */
  binaryMatches: string[];
  /** True when maxRecords was reached and the search was stopped. */
  cutShort: boolean;
}

export interface NewestFiles {
  newest: string[];
  total: number;
}

export interface SearchBackend {
  readonly name: "ripgrep" | "builtin";
  /**
   * Files under the root that match the globs (display paths): the `limit` most recently modified, newest
   * first with ties by path, and how many there are in all.
   */
  newestFiles(query: FileQuery, limit: number): Promise<NewestFiles>;
  /** Files containing a match (display paths), in no particular order. */
  matchingFiles(query: GrepQuery): Promise<string[]>;
  /** Number of matching lines per file (display paths). */
  countMatches(query: GrepQuery): Promise<Array<[path: string, count: number]>>;
  matchingLines(query: ContentQuery): Promise<ContentResult>;
}
