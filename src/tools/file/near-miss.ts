import { diffArrays } from "diff";
import { similarity } from "../../core/similarity.js";
import { formatNumberedLines } from "./line-format.js";

/**
 * When an Edit finds nothing, the closest region of the file and how old_string differs from it, with
 * whitespace made visible: the next attempt can copy the real text instead of guessing again.
 */

/** Files with more lines than this get no similarity scan (the exact-line vote still runs). */
const MAX_SCANNED_LINES = 50_000;
/** Least similarity of the best line for the hint to be worth showing. */
const MIN_LINE_SIMILARITY = 0.5;
/** Longest region and diff shown. */
const MAX_HINT_LINES = 30;

/** Comparable form of a line: quotes straightened, dashes and ellipses as ASCII, whitespace collapsed. */
function loose(line: string): string {
  return line
    .replace(/[\u2018\u2019\u201a\u201b]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f]/g, '"')
    .replace(/[-\u2010-\u2015\u2212]+/g, "-")
    .replaceAll("\u2026", "...")
    .trim()
    .replace(/\s+/g, " ");
}

/** Makes spaces, tabs and carriage returns visible. */
export function visibleWhitespace(line: string): string {
  return line.replaceAll(" ", "\u00b7").replaceAll("\t", "\u2192").replaceAll("\r", "\u240d");
}

/** File line index where the region most like old_string starts, or undefined when nothing is close. */
function closestStart(fileLines: string[], oldLines: string[]): number | undefined {
  const wanted = new Map<string, number[]>();
  oldLines.forEach((line, k) => {
    const key = loose(line);
    if (key !== "") wanted.set(key, [...(wanted.get(key) ?? []), k]);
  });
  // Each file line that loosely equals old_string line k votes for a region starting k lines earlier.
  const votes = new Map<number, number>();
  let best: number | undefined;
  fileLines.forEach((line, i) => {
    for (const k of wanted.get(loose(line)) ?? []) {
      const start = Math.max(0, i - k);
      const n = (votes.get(start) ?? 0) + 1;
      votes.set(start, n);
      if (best === undefined || n > votes.get(best)!) best = start;
    }
  });
  if (best !== undefined || fileLines.length > MAX_SCANNED_LINES) return best;

  // No line is even loosely equal: anchor on the most similar line to old_string's longest line.
  const k = oldLines.reduce((a, l, i) => (l.trim().length > oldLines[a]!.trim().length ? i : a), 0);
  const target = oldLines[k]!.trim();
  let bestScore = MIN_LINE_SIMILARITY;
  fileLines.forEach((line, i) => {
    const score = similarity(line.trim(), target);
    if (score > bestScore) {
      bestScore = score;
      best = Math.max(0, i - k);
    }
  });
  return best;
}

export function nearMissHint(view: string, oldString: string): string | undefined {
  const oldLines = oldString.replaceAll("\r\n", "\n").replace(/\n$/, "").split("\n");
  if (oldLines.every((l) => l.trim() === "")) return undefined;
  const fileLines = view.replace(/\n$/, "").split("\n");
  const start = closestStart(fileLines, oldLines);
  if (start === undefined) return undefined;
  const region = fileLines.slice(start, start + Math.min(oldLines.length, MAX_HINT_LINES));
  const diff: string[] = [];
  for (const part of diffArrays(region, oldLines.slice(0, MAX_HINT_LINES))) {
    const mark = part.added ? "+ " : part.removed ? "- " : "  ";
    for (const line of part.value)
      diff.push(mark + (part.added || part.removed ? visibleWhitespace(line) : line));
  }
  return [
    `The closest text in the file is at lines ${start + 1}-${start + region.length}:`,
    formatNumberedLines(region, start + 1),
    "How old_string differs from it (- file, + old_string; \u00b7 is a space, \u2192 a tab, \u240d a carriage return):",
    ...diff,
  ].join("\n");
}
