import type { ToolContext } from "../../core/context.js";
import { configuredPositiveInt } from "../../core/env.js";
import { formatLine, formattedLength } from "./line-format.js";

/**
 * Which lines one Read returns. A page ends at the line limit, at the token budget or (for a read of the
 * whole file) at WHOLE_READ_MAX_CHARS, whichever comes first; the caller is then told the exact offset
 * and limit of the next page, so a large file is a series of reads, never a dead end.
 */

/** Lines per call when no limit is given. */
export const DEFAULT_LINE_LIMIT = 2000;
/** Most characters a read of a whole file returns in one page. */
const WHOLE_READ_MAX_CHARS = 256 * 1024;
/** Default output budget, in tokens; CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS overrides it. */
const DEFAULT_MAX_OUTPUT_TOKENS = 25_000;
/** Highest budget the environment may set. */
export const MAX_OUTPUT_TOKENS_CEILING = 200_000;
/** Rough size of a token in characters, for budgeting. */
export const CHARS_PER_TOKEN = 4;

export function outputTokenBudget(ctx: Pick<ToolContext, "config">): number {
  const configured = configuredPositiveInt(
    ctx,
    "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS",
    DEFAULT_MAX_OUTPUT_TOKENS,
  );
  return Math.min(configured, MAX_OUTPUT_TOKENS_CEILING);
}

export interface PageRequest {
  /** 1-based first line. */
  offset: number;
  /** The caller's limit; without one, DEFAULT_LINE_LIMIT. */
  limit?: number;
  /** Neither offset nor limit was given. */
  wholeFile: boolean;
  /** The most tokens one page may take (see outputTokenBudget). */
  tokenBudget: number;
}

export interface Page {
  text: string;
  first: number;
  /** Last line shown (first - 1 when none). */
  last: number;
  /** The next page, when the file goes on past this one and the caller did not ask for exactly this. */
  next?: { offset: number; limit: number };
}

/** Consecutive lines of a file: all of them, or (for files streamed from disk) a window. */
export interface LineWindow {
  lines: readonly string[];
  /** Full length of each line, when `lines` hold only their starts (see read-stream.ts). */
  lengths?: readonly number[];
  /** File line number of lines[0]. */
  firstLine: number;
  /** True when the last line of the window is the last line of the file. */
  reachesEnd: boolean;
}

/**
 * Lines a window needs from the page's offset on (fewer at the end of the file) for pageOf to give what
 * it gives over the whole file: this page and the next, each at most `limit` lines.
 */
export function windowLines(limit = DEFAULT_LINE_LIMIT): number {
  return 2 * limit;
}

/** How many lines starting at window index `from` fit in one page. */
function linesThatFit(window: LineWindow, from: number, limit: number, maxChars: number): number {
  const { lines, lengths, firstLine } = window;
  let chars = 0;
  let n = 0;
  while (n < limit && from + n < lines.length) {
    const index = from + n;
    const lineChars = formattedLength(firstLine + index, lengths?.[index] ?? lines[index]!.length) + 1;
    if (n > 0 && chars + lineChars > maxChars) break;
    chars += lineChars;
    n++;
  }
  return n;
}

/** The page starting at file line `request.offset`, which must lie in the window. */
export function pageOf(window: LineWindow, request: PageRequest): Page {
  const budget = request.tokenBudget * CHARS_PER_TOKEN;
  const maxChars = request.wholeFile ? Math.min(budget, WHOLE_READ_MAX_CHARS) : budget;
  const from = request.offset - window.firstLine;
  const limit = request.limit ?? DEFAULT_LINE_LIMIT;
  const count = linesThatFit(window, from, limit, maxChars);
  const shown = window.lines.slice(from, from + count);
  const text = shown
    .map((line, i) => formatLine(line, request.offset + i, window.lengths?.[from + i]))
    .join("\n");
  const last = request.offset + count - 1;
  const atEnd = window.reachesEnd && from + count >= window.lines.length;
  // A caller who asked for exactly these lines needs no pointer; anyone else is told where to go on.
  const gotWhatWasAsked = request.limit !== undefined && count === request.limit;
  if (atEnd || gotWhatWasAsked) return { text, first: request.offset, last };
  const nextLimit = linesThatFit(window, from + count, limit, maxChars);
  return { text, first: request.offset, last, next: { offset: last + 1, limit: nextLimit } };
}
