/** Result text of Grep and Glob, in Claude Code's shapes (wording our own). */
import type { FileLines } from "./query.js";

export interface Page {
  offset: number;
  /** 0 = no limit. */
  limit: number;
}

export function pageOf<T>(items: readonly T[], page: Page): T[] {
  return page.limit === 0 ? items.slice(page.offset) : items.slice(page.offset, page.offset + page.limit);
}

/**
 * The note under a page that is not everything: which entries are shown and how to get the next ones.
 * `total` is undefined when the search stopped before counting them all.
 */
export function pageNote(noun: string, page: Page, shown: number, total: number | undefined): string {
  const end = page.offset + shown;
  const more = total === undefined || end < total;
  if (!more && page.offset === 0) return "";
  const range = shown === 0 ? `no ${noun}` : `${noun} ${page.offset + 1}–${end}`;
  const of = total === undefined ? "" : ` of ${total}`;
  const next = more ? ` Pass offset: ${end} for the next page.` : "";
  return `\n\n(Showing ${range}${of}.${next})`;
}

/** `newest` holds at least the files up to the end of the page, newest first; `total` counts them all. */
export function formatFiles(newest: readonly string[], total: number, page: Page): string {
  const shown = pageOf(newest, page);
  const noun = total === 1 ? "file" : "files";
  return `Found ${total} ${noun}\n${shown.join("\n")}${pageNote("files", page, shown.length, total)}`;
}

export function formatCounts(counts: ReadonlyArray<readonly [string, number]>, page: Page): string {
  const shown = pageOf(counts, page);
  const total = counts.reduce((n, [, c]) => n + c, 0);
  const lines = shown.map(([path, n]) => `${path}:${n}`).join("\n");
  const files = counts.length === 1 ? "file" : "files";
  return (
    `${lines}\n\nFound ${total} matching ${total === 1 ? "line" : "lines"} across ${counts.length} ${files}.` +
    pageNote("files", page, shown.length, counts.length)
  );
}

export interface ContentFormat {
  /** Omit the path on every line (a single file was searched). */
  showPath: boolean;
  lineNumbers: boolean;
  /** Put `--` between files, as rg does when context lines are shown. */
  breakBetweenFiles: boolean;
}

/** `path:N:text` for matches, `path-N-text` for context, from rg's `N:text` / `N-text` records. */
function formatRecord(path: string, record: string, format: ContentFormat): string {
  if (record === "--") return record;
  let k = 0;
  while (k < record.length && record.charCodeAt(k) >= 48 && record.charCodeAt(k) <= 57) k++;
  // A CRLF file's lines reach us with their \r: drop it, as Read shows \r\n as \n.
  const line = record.endsWith("\r") ? record.slice(0, -1) : record;
  const body = format.lineNumbers ? line : line.slice(k + 1);
  return format.showPath ? path + line[k] + body : body;
}

/** One page of output lines; returns the lines and how many there are in all. */
export function contentPage(
  files: readonly FileLines[],
  page: Page,
  format: ContentFormat,
): { lines: string[]; total: number } {
  const lines: string[] = [];
  const end = page.limit === 0 ? Number.POSITIVE_INFINITY : page.offset + page.limit;
  let index = 0;
  const emit = (path: string, record: string) => {
    if (index >= page.offset && index < end) lines.push(formatRecord(path, record, format));
    index++;
  };
  files.forEach((file, i) => {
    if (i > 0 && format.breakBetweenFiles) emit(file.path, "--");
    for (const record of file.records) emit(file.path, record);
  });
  return { lines, total: index };
}
