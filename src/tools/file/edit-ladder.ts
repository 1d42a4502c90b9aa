import type { Splice } from "../../fs/codec.js";

/**
 * Finds where an Edit applies. An exact match comes first; failing that, a strict ladder of rungs, each
 * forgiving ONE kind of drift that models produce when they copy text (line endings, trailing whitespace,
 * a uniform indentation shift, curly quotes, the other Unicode form of accented letters, copied `N\t`
 * line-number prefixes). A rung is accepted only
 * when it matches in exactly one place and every line matches under it. There is no similarity threshold
 * and no anchoring on a few lines: a wrong edit is worse than a failed one.
 */

export type Rung =
  | "exact"
  | "line-endings"
  | "trailing-whitespace"
  | "indentation"
  | "quotes"
  | "unicode-form"
  | "line-numbers";

/** Words for results: "matched after <description>". */
export const RUNG_DESCRIPTIONS: Record<Rung, string> = {
  exact: "an exact match",
  "line-endings": "normalising CRLF line endings in old_string",
  "trailing-whitespace": "ignoring trailing whitespace at line ends",
  indentation:
    "shifting the indentation of every line by the same amount (new_string was re-indented to match)",
  quotes: "treating curly and straight quotes as equal (new_string uses the file's quote style)",
  "unicode-form":
    "treating composed and decomposed accented characters (Unicode NFC and NFD) as equal (new_string uses the file's form)",
  "line-numbers": "stripping line-number prefixes copied from Read output",
};

export type LadderResult =
  | { ok: true; rung: Rung; splices: Splice[] }
  | { ok: false; reason: "not-found" }
  /** `lines` has one entry per match (overlapping ones share a line), up to MAX_LISTED_MATCHES + 1. */
  | { ok: false; reason: "ambiguous"; rung: Rung; lines: number[] }
  | { ok: false; reason: "unusable"; rung: Rung; message: string };

/** How many match line numbers an ambiguity error lists. */
export const MAX_LISTED_MATCHES = 20;

/** 1-based line number of a view offset. */
export function lineNumberAt(view: string, offset: number): number {
  let line = 1;
  for (let i = view.indexOf("\n"); i !== -1 && i < offset; i = view.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * Start offsets of occurrences: with `all`, every non-overlapping one (replace_all); otherwise enough to
 * know whether the match is unique, overlapping ones included ("aa" occurs twice in "aaa").
 */
function occurrences(haystack: string, needle: string, all: boolean): number[] {
  const found: number[] = [];
  const step = all ? needle.length : 1;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + step)) {
    found.push(i);
    if (!all && found.length > MAX_LISTED_MATCHES) break;
  }
  return found;
}

/** Substring matching of a normalised old_string in a same-length normalisation of the view. */
function substringRung(
  rung: Rung,
  view: string,
  needle: string,
  replacementFor: (start: number, end: number) => string,
  replaceAll: boolean,
): LadderResult {
  const starts = occurrences(view, needle, replaceAll);
  if (starts.length === 0) return { ok: false, reason: "not-found" };
  if (starts.length > 1 && !(replaceAll && rung === "exact")) {
    return {
      ok: false,
      reason: "ambiguous",
      rung,
      lines: starts.map((s) => lineNumberAt(view, s)),
    };
  }
  return {
    ok: true,
    rung,
    splices: starts.map((start) => ({
      start,
      end: start + needle.length,
      text: replacementFor(start, start + needle.length),
    })),
  };
}

// ---- quotes ----

const CURLY_SINGLE = /[\u2018\u2019\u201a\u201b]/g;
const CURLY_DOUBLE = /[\u201c\u201d\u201e\u201f]/g;

/** Same-length mapping of curly quotes to straight ones, so offsets in the result are offsets in the input. */
function straightenQuotes(text: string): string {
  return text.replace(CURLY_SINGLE, "'").replace(CURLY_DOUBLE, '"');
}

/** Straight quotes to typographic ones: opening after a space or bracket, closing (and apostrophes) elsewhere. */
function curlQuotes(text: string, quote: "'" | '"', before: string): string {
  const [open, close] = quote === "'" ? ["\u2018", "\u2019"] : ["\u201c", "\u201d"];
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const previous = i === 0 ? before : text[i - 1]!;
    if (c !== quote) out += c;
    else out += previous === "" || /[\s([{\u2014-]/.test(previous) ? open : close;
  }
  return out;
}

/** How a matched region writes one kind of quote: only curly, only straight, both, or not at all. */
function quoteStyle(
  region: string,
  quote: "'" | '"',
  curly: RegExp,
): "curly" | "straight" | "mixed" | "none" {
  const hasCurly = new RegExp(curly.source).test(region);
  const hasStraight = region.includes(quote);
  if (hasCurly && hasStraight) return "mixed";
  return hasCurly ? "curly" : hasStraight ? "straight" : "none";
}

/**
 * Text new_string adds (not copied from old_string), in the region's quote style where it has only one;
 * `before` is the character preceding it, which decides whether a quote at its start opens or closes.
 */
function styleInserted(text: string, region: string, before: string): string {
  let out = text;
  for (const [quote, curly] of [
    ["'", CURLY_SINGLE],
    ['"', CURLY_DOUBLE],
  ] as const) {
    const style = quoteStyle(region, quote, curly);
    if (style === "curly") out = curlQuotes(out, quote, before);
    else if (style === "straight") out = out.replace(new RegExp(curly.source, "g"), quote);
  }
  return out;
}

/**
 * new_string with the file's quote characters. The parts new_string keeps from old_string (its common
 * head and tail) take the exact characters of the matched region, so a file that mixes styles (straight
 * delimiters around a curly apostrophe) keeps each quote as it was; only the text in between is new, and it
 * follows the region's style when the region has just one.
 */
function matchQuoteStyle(newString: string, oldString: string, region: string): string {
  const limit = Math.min(oldString.length, newString.length);
  let head = 0;
  while (head < limit && oldString[head] === newString[head]) head++;
  let tail = 0;
  while (
    tail < limit - head &&
    oldString[oldString.length - 1 - tail] === newString[newString.length - 1 - tail]
  )
    tail++;
  const middle = newString.slice(head, newString.length - tail);
  return (
    region.slice(0, head) +
    styleInserted(middle, region, region.slice(0, head).slice(-1)) +
    region.slice(region.length - tail)
  );
}

// ---- line-based rungs ----

interface Lines {
  text: string[];
  starts: number[];
}

function splitLines(view: string): Lines {
  const text = view.split("\n");
  const starts = new Array<number>(text.length);
  let offset = 0;
  for (let i = 0; i < text.length; i++) {
    starts[i] = offset;
    offset += text[i]!.length + 1;
  }
  return { text, starts };
}

/** old_string as whole lines; a final newline means the match takes the last line's newline too. */
function needleLines(old: string): { lines: string[]; takesNewline: boolean } {
  const takesNewline = old.endsWith("\n");
  const lines = (takesNewline ? old.slice(0, -1) : old).split("\n");
  return { lines, takesNewline };
}

const isBlank = (line: string) => line.trim() === "";
const indentOf = (line: string) => line.slice(0, line.length - line.trimStart().length);

/** A line rung: compares a file line with an old_string line, given the rung's state for this candidate. */
interface LineRung {
  rung: Rung;
  /** Prepares a candidate starting at file line `first`; undefined rules it out. */
  begin(file: Lines, first: number, old: string[]): LineMatcher | undefined;
}

interface LineMatcher {
  equal(fileLine: string, oldLine: string): boolean;
  /** new_string rewritten for this match, or a message when it cannot be. */
  replacement(newString: string): string | { error: string };
}

const trailingWhitespace: LineRung = {
  rung: "trailing-whitespace",
  begin: () => ({
    equal: (a, b) => a.trimEnd() === b.trimEnd(),
    replacement: (s) => s,
  }),
};

const indentation: LineRung = {
  rung: "indentation",
  begin(file, first, old) {
    const k = old.findIndex((l) => !isBlank(l));
    const fileLine = file.text[first + k];
    if (k === -1 || fileLine === undefined) return undefined;
    const fileIndent = indentOf(fileLine);
    const oldIndent = indentOf(old[k]!);
    let add = "";
    let remove = "";
    if (fileIndent.length > oldIndent.length && fileIndent.endsWith(oldIndent))
      add = fileIndent.slice(0, fileIndent.length - oldIndent.length);
    else if (oldIndent.length > fileIndent.length && oldIndent.endsWith(fileIndent))
      remove = oldIndent.slice(0, oldIndent.length - fileIndent.length);
    else return undefined;
    return {
      equal: (a, b) => (isBlank(b) ? isBlank(a) : add ? a === add + b : b === remove + a),
      replacement(s) {
        const lines = s.split("\n");
        const bad = lines.find((l) => !isBlank(l) && remove && !l.startsWith(remove));
        if (bad !== undefined) {
          return {
            error: `new_string cannot be shifted left by ${JSON.stringify(remove)}: the line ${JSON.stringify(bad)} is indented less than that`,
          };
        }
        return lines.map((l) => (isBlank(l) ? l : add ? add + l : l.slice(remove.length))).join("\n");
      },
    };
  },
};

/** Scans the file for every start line where all old_string lines match under a rung. */
function lineRung(
  rungDef: LineRung,
  file: Lines,
  old: string,
  newString: string,
  view: string,
): LadderResult {
  const { lines: cut, takesNewline } = needleLines(old);
  if (cut.every(isBlank)) return { ok: false, reason: "not-found" };
  const matches: Array<{ first: number; matcher: LineMatcher }> = [];
  for (let first = 0; first + cut.length <= file.text.length; first++) {
    const matcher = rungDef.begin(file, first, cut);
    if (!matcher) continue;
    let all = true;
    for (let k = 0; k < cut.length && all; k++) all = matcher.equal(file.text[first + k]!, cut[k]!);
    if (all) matches.push({ first, matcher });
    if (matches.length > MAX_LISTED_MATCHES) break;
  }
  if (matches.length === 0) return { ok: false, reason: "not-found" };
  if (matches.length > 1)
    return { ok: false, reason: "ambiguous", rung: rungDef.rung, lines: matches.map((m) => m.first + 1) };
  const { first, matcher } = matches[0]!;
  const text = matcher.replacement(newString);
  if (typeof text !== "string")
    return { ok: false, reason: "unusable", rung: rungDef.rung, message: text.error };
  const last = first + cut.length - 1;
  const start = file.starts[first]!;
  let end = file.starts[last]! + file.text[last]!.length;
  if (takesNewline && end < view.length) end += 1;
  return { ok: true, rung: rungDef.rung, splices: [{ start, end, text }] };
}

const LINE_NUMBER_PREFIX = /^ *\d+(\t|\u2192)/;

/** old_string and new_string without copied `N\t` prefixes, when every old_string line carries one. */
function stripLineNumbers(old: string, newString: string): { old: string; newString: string } | undefined {
  const oldLines = old.split("\n");
  const content = oldLines.filter((l, i) => !(i === oldLines.length - 1 && l === ""));
  if (content.length === 0 || !content.every((l) => LINE_NUMBER_PREFIX.test(l))) return undefined;
  const strip = (s: string) =>
    s
      .split("\n")
      .map((l) => l.replace(LINE_NUMBER_PREFIX, ""))
      .join("\n");
  const newLines = newString.split("\n").filter((l) => l !== "");
  const newNumbered = newLines.length > 0 && newLines.every((l) => LINE_NUMBER_PREFIX.test(l));
  return { old: strip(old), newString: newNumbered ? strip(newString) : newString };
}

/**
 * Runs the ladder. `view` is the file as Read shows it (LF line breaks); the splices returned are view
 * offsets with their replacement text.
 */
export function findEdit(
  view: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): LadderResult {
  const exact = substringRung("exact", view, oldString, () => newString, replaceAll);
  if (exact.ok || exact.reason !== "not-found") return exact;

  const old = oldString.replaceAll("\r\n", "\n");
  const replacement = newString.replaceAll("\r\n", "\n");
  if (old !== oldString) {
    const result = substringRung("line-endings", view, old, () => replacement, false);
    if (result.ok || result.reason !== "not-found") return result;
  }

  let file: Lines | undefined;
  for (const rungDef of [trailingWhitespace, indentation]) {
    file ??= splitLines(view);
    const result = lineRung(rungDef, file, old, replacement, view);
    if (result.ok || result.reason !== "not-found") return result;
  }

  const straightOld = straightenQuotes(old);
  if (straightOld !== old || /['"]/.test(old)) {
    const result = substringRung(
      "quotes",
      straightenQuotes(view),
      straightOld,
      (s, e) => matchQuoteStyle(replacement, old, view.slice(s, e)),
      false,
    );
    if (result.ok || result.reason !== "not-found") return result;
  }

  // The same text in the other Unicode form (é as one character or as e + accent): a model cannot see
  // the difference in Read output, so it cannot copy its way out of it.
  for (const form of ["NFC", "NFD"] as const) {
    const normalised = old.normalize(form);
    if (normalised === old) continue;
    const result = substringRung("unicode-form", view, normalised, () => replacement.normalize(form), false);
    if (result.ok || result.reason !== "not-found") return result;
  }

  const stripped = stripLineNumbers(old, replacement);
  if (stripped) {
    const result = substringRung("line-numbers", view, stripped.old, () => stripped.newString, false);
    if (result.ok || result.reason !== "not-found") return result;
  }
  return { ok: false, reason: "not-found" };
}
