/** Matching inside one file for the built-in search, producing ripgrep's records (see FileLines). */
import { MAX_LINE_CHARS, OMITTED_CONTEXT_LINE, OMITTED_MATCH_LINE } from "./query.js";

/** rg treats a file with a NUL byte as binary and skips it when walking. */
export function looksBinary(bytes: Buffer): boolean {
  return bytes.includes(0);
}

export interface ScanOptions {
  multiline: boolean;
  before: number;
  after: number;
  onlyMatching: boolean;
}

/** Text split into lines; a final newline does not start another line. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Index of the line holding character `offset`, given each line's start offset. */
function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function lineStarts(lines: string[]): number[] {
  const starts = new Array<number>(lines.length);
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    starts[i] = offset;
    offset += lines[i]!.length + 1;
  }
  return starts;
}

interface Match {
  line: number;
  text: string;
}

/** Every match with the (0-based) line it starts on; multiline matches mark each line they cover. */
function findMatches(
  text: string,
  lines: string[],
  regex: RegExp,
  multiline: boolean,
): {
  matchLines: number[];
  matches: Match[];
} {
  const matchLines: number[] = [];
  const matches: Match[] = [];
  if (!multiline) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      regex.lastIndex = 0;
      let m = regex.exec(line);
      if (!m) continue;
      matchLines.push(i);
      while (m) {
        matches.push({ line: i, text: m[0] });
        if (m[0] === "") regex.lastIndex++;
        m = regex.exec(line);
      }
    }
    return { matchLines, matches };
  }
  const starts = lineStarts(lines);
  const covered = new Set<number>();
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m; m = regex.exec(text)) {
    const first = lineAt(starts, m.index);
    const last = lineAt(starts, Math.max(m.index, m.index + m[0].length - 1));
    for (let l = first; l <= last && l < lines.length; l++) covered.add(l);
    matches.push({ line: first, text: m[0] });
    if (m[0] === "") regex.lastIndex++;
  }
  matchLines.push(...[...covered].sort((a, b) => a - b));
  return { matchLines, matches };
}

/** Number of lines with a match, as `rg --count` reports. */
export function countLines(text: string, regex: RegExp, multiline: boolean): number {
  return findMatches(text, splitLines(text), regex, multiline).matchLines.length;
}

function record(lines: string[], index: number, isMatch: boolean): string {
  const line = lines[index]!;
  if (line.length > MAX_LINE_CHARS) {
    return `${index + 1}${isMatch ? ":" : "-"}${isMatch ? OMITTED_MATCH_LINE : OMITTED_CONTEXT_LINE}`;
  }
  return `${index + 1}${isMatch ? ":" : "-"}${line}`;
}

/** The records rg would print for this file: matching lines, context lines and `--` breaks. */
export function scanRecords(text: string, regex: RegExp, options: ScanOptions): string[] {
  const lines = splitLines(text);
  const { matchLines, matches } = findMatches(text, lines, regex, options.multiline);
  if (options.onlyMatching) return matches.map((m) => `${m.line + 1}:${m.text}`);
  const out: string[] = [];
  const breaks = options.before > 0 || options.after > 0;
  let last = -1;
  let afterEnd = -1;
  for (const m of matchLines) {
    const trailing = Math.min(afterEnd, m - 1);
    for (let l = last + 1; l <= trailing; l++) out.push(record(lines, l, false));
    if (trailing > last) last = trailing;
    const start = Math.max(m - options.before, last + 1);
    if (breaks && last >= 0 && start > last + 1) out.push("--");
    for (let l = start; l < m; l++) out.push(record(lines, l, false));
    out.push(record(lines, m, true));
    last = m;
    afterEnd = m + options.after;
  }
  for (let l = last + 1; l <= Math.min(afterEnd, lines.length - 1); l++) out.push(record(lines, l, false));
  return out;
}

/**
 * Whether the text has a match. One pass over the whole text rejects most files quickly; without
 * multiline a hit is confirmed line by line, since `\s` or `[^x]` could have matched across a newline.
 */
export function hasMatch(text: string, regex: RegExp, multiline: boolean): boolean {
  regex.lastIndex = 0;
  if (!regex.test(text)) return false;
  if (multiline) return true;
  for (const line of splitLines(text)) {
    regex.lastIndex = 0;
    if (regex.test(line)) return true;
  }
  return false;
}
