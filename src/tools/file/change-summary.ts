import { applySplices, type Splice } from "../../fs/codec.js";
import { formatNumberedLines } from "./line-format.js";

/**
 * What an edit did, in two forms: a few numbered lines around each change for the model (so it can check
 * the result without reading the file again) and unified-diff hunks for hosts. Work is proportional to the
 * changed regions plus one forward scan for line numbers, never to re-reading the whole file.
 */

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Unified-diff lines: " context", "-removed", "+added". */
  lines: string[];
}

/** Unchanged lines shown around each change. */
const CONTEXT_LINES = 3;
/** Whole lines a window of the file (see summariseChanges) needs on each side of a single change. */
export const CONTEXT_WINDOW_LINES = CONTEXT_LINES + 1;
/** Changed places shown in the result text; the rest are counted. */
const MAX_SHOWN_CHANGES = 3;
/** Longest numbered excerpt for one change; longer ones show their head and tail. */
const MAX_EXCERPT_LINES = 40;
const EXCERPT_TAIL_LINES = 8;
/** Most hunks kept in metadata (replace_all over a huge file). */
const MAX_HUNKS = 200;

/** Forward-only line counter: each call costs only the text since the previous one. */
function lineCounter(view: string, firstLine: number) {
  let offset = 0;
  let line = firstLine;
  return (to: number) => {
    for (let i = view.indexOf("\n", offset); i !== -1 && i < to; i = view.indexOf("\n", i + 1)) line++;
    offset = Math.max(offset, to);
    return line;
  };
}

const lineStartOf = (view: string, offset: number) => view.lastIndexOf("\n", offset - 1) + 1;
function lineEndOf(view: string, offset: number): number {
  const i = view.indexOf("\n", offset);
  return i === -1 ? view.length : i;
}

/** Up to `count` whole lines before `lineStart` (exclusive) and after `lineEnd` (the end of a line). */
function linesBefore(view: string, lineStart: number, count: number): string[] {
  const out: string[] = [];
  let end = lineStart - 1;
  while (out.length < count && end >= 0) {
    const start = lineStartOf(view, end);
    out.unshift(view.slice(start, end));
    end = start - 1;
  }
  return out;
}

function linesAfter(view: string, lineEnd: number, count: number): string[] {
  const out: string[] = [];
  let start = lineEnd + 1;
  while (out.length < count && start < view.length) {
    const end = lineEndOf(view, start);
    out.push(view.slice(start, end));
    start = end + 1;
  }
  return out;
}

/** True when at most 2 * CONTEXT_LINES lines separate offset `a` (a line end) from `b` (a line start). */
function closeTogether(view: string, a: number, b: number): boolean {
  let breaks = 0;
  for (let i = view.indexOf("\n", a); i !== -1 && i < b; i = view.indexOf("\n", i + 1)) {
    if (++breaks > 2 * CONTEXT_LINES + 1) return false;
  }
  return true;
}

interface Group {
  from: number;
  to: number;
  splices: Splice[];
}

/** Splices whose regions are close enough that their context would overlap become one change. */
function groupSplices(view: string, splices: readonly Splice[]): Group[] {
  const groups: Group[] = [];
  for (const splice of splices) {
    const from = lineStartOf(view, splice.start);
    const to = lineEndOf(view, splice.end);
    const last = groups.at(-1);
    if (last && closeTogether(view, last.to, from)) {
      last.to = Math.max(last.to, to);
      last.splices.push(splice);
    } else {
      groups.push({ from, to, splices: [splice] });
    }
  }
  return groups;
}

function commonPrefix(a: string[], b: string[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

export interface ChangeSummary {
  /** Numbered lines of the file after the edit around each change, for the result text. */
  excerpt: string;
  hunks: Hunk[];
}

/**
 * Summarises splices applied to `view` (the file before the edit). `view` may also be a window of the
 * file that starts at line `firstLine` and holds more than CONTEXT_LINES whole lines before and after
 * every splice (see CONTEXT_WINDOW_LINES): the summary is then the same as for the whole file.
 */
export function summariseChanges(view: string, splices: readonly Splice[], firstLine = 1): ChangeSummary {
  const lineAt = lineCounter(view, firstLine);
  const groups = groupSplices(view, splices);
  const hunks: Hunk[] = [];
  const excerpts: string[] = [];
  let lineDelta = 0;
  for (const group of groups) {
    const rebuilt = applySplices(view, group.splices, group.from, group.to);
    const oldLines = view.slice(group.from, group.to).split("\n");
    const newLines = rebuilt.split("\n");
    // Lines the splice text repeats unchanged are context, not changes.
    const head = commonPrefix(oldLines, newLines);
    const tail = commonPrefix(oldLines.slice(head).reverse(), newLines.slice(head).reverse());
    const removed = oldLines.slice(head, oldLines.length - tail);
    const added = newLines.slice(head, newLines.length - tail);
    const before = [...linesBefore(view, group.from, CONTEXT_LINES), ...oldLines.slice(0, head)].slice(
      -CONTEXT_LINES,
    );
    const after = [
      ...oldLines.slice(oldLines.length - tail),
      ...linesAfter(view, group.to, CONTEXT_LINES),
    ].slice(0, CONTEXT_LINES);
    const oldStart = lineAt(group.from) + head - before.length;
    const newStart = oldStart + lineDelta;
    lineDelta += added.length - removed.length;
    if (hunks.length < MAX_HUNKS) {
      hunks.push({
        oldStart,
        oldLines: before.length + removed.length + after.length,
        newStart,
        newLines: before.length + added.length + after.length,
        lines: [
          ...before.map((l) => ` ${l}`),
          ...removed.map((l) => `-${l}`),
          ...added.map((l) => `+${l}`),
          ...after.map((l) => ` ${l}`),
        ],
      });
    }
    if (excerpts.length < MAX_SHOWN_CHANGES)
      excerpts.push(excerptOf([...before, ...added, ...after], newStart));
  }
  if (groups.length > MAX_SHOWN_CHANGES)
    excerpts.push(`... and ${groups.length - MAX_SHOWN_CHANGES} more changed places.`);
  return { excerpt: excerpts.join("\n...\n"), hunks };
}

function excerptOf(lines: string[], firstLine: number): string {
  if (lines.length <= MAX_EXCERPT_LINES) return formatNumberedLines(lines, firstLine);
  const headCount = MAX_EXCERPT_LINES - EXCERPT_TAIL_LINES;
  const tailStart = lines.length - EXCERPT_TAIL_LINES;
  return [
    formatNumberedLines(lines.slice(0, headCount), firstLine),
    `... (${tailStart - headCount} lines not shown)`,
    formatNumberedLines(lines.slice(tailStart), firstLine + tailStart),
  ].join("\n");
}
