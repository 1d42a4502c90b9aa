import { type ChangeObject, diffArrays, diffChars } from "diff";
import type { Splice } from "../../fs/codec.js";

/**
 * Finds where an Edit applies. An exact match comes first; failing that, a strict ladder of rungs, each
 * forgiving ONE kind of drift that models produce when they copy text (line endings, trailing whitespace,
 * a uniform indentation shift, spaces typed for tabs or the reverse, curly quotes, ASCII typed for
 * no-break spaces, dashes and ellipses, the other Unicode form of accented letters, copied `N\t`
 * line-number prefixes). A rung is accepted only when it matches in exactly one place and every line
 * matches under it. There is no similarity threshold and no anchoring on a few lines: a wrong edit is
 * worse than a failed one.
 *
 * Whatever the rung, the parts of the matched region that new_string does not change keep the file's own
 * text (its trailing spaces, indentation characters, dashes, quotes), and a final newline the file lacks
 * is not added: only what the model changed takes new_string's text.
 */

export type Rung =
  | "exact"
  | "line-endings"
  | "trailing-whitespace"
  | "indentation"
  | "indentation-level"
  | "quotes"
  | "look-alikes"
  | "unicode-form"
  | "line-numbers";

/** Words for results: "matched after <description>". */
export const RUNG_DESCRIPTIONS: Record<Rung, string> = {
  exact: "an exact match",
  "line-endings": "normalising CRLF line endings in old_string",
  "trailing-whitespace": "ignoring trailing whitespace at line ends",
  indentation:
    "shifting the indentation of every line by the same amount (new_string was re-indented to match)",
  "indentation-level":
    "comparing indentation by level, tabs and spaces alike (new_string was written with the file's indentation characters)",
  quotes: "treating curly and straight quotes as equal (new_string uses the file's quote style)",
  "look-alikes":
    "treating no-break spaces, dashes and the ellipsis character as their ASCII look-alikes (the file keeps its characters where new_string keeps old_string's text)",
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

// ---- keeping the file's text where new_string keeps old_string's ----

/** A piece of old_string, `old[from, to)`, and the file text it matched. */
interface Piece {
  from: number;
  to: number;
  file: string;
}

/**
 * Most character edits the diff of old_string and new_string looks for; past that, only their common
 * head and tail count as kept (a bound on time for large rewrites, where little is kept anyway).
 */
const MAX_CHAR_DIFF_EDITS = 1000;

/** old and new as one change between their common head and tail. */
function headTail(old: string, newString: string): ChangeObject<string>[] {
  const limit = Math.min(old.length, newString.length);
  let head = 0;
  while (head < limit && old[head] === newString[head]) head++;
  let tail = 0;
  while (tail < limit - head && old[old.length - 1 - tail] === newString[newString.length - 1 - tail]) tail++;
  const part = (value: string, added: boolean, removed: boolean) => ({ value, added, removed, count: 0 });
  return [
    part(old.slice(0, head), false, false),
    part(old.slice(head, old.length - tail), false, true),
    part(newString.slice(head, newString.length - tail), true, false),
    part(old.slice(old.length - tail), false, false),
  ];
}

/**
 * new_string written over a region that old_string matched piece by piece (ascending `pieces` covering
 * old_string). Where new_string keeps old_string's text, whole pieces are written as the file has them;
 * text new_string adds goes through `inserted`, given the character written before it.
 */
function keepFileText(
  old: string,
  newString: string,
  pieces: readonly Piece[],
  inserted: (text: string, before: string) => string = (text) => text,
): string {
  const parts = diffChars(old, newString, { maxEditLength: MAX_CHAR_DIFF_EDITS }) ?? headTail(old, newString);
  let out = "";
  let at = 0;
  let p = 0;
  for (const part of parts) {
    if (part.added) {
      out += inserted(part.value, out.slice(-1));
      continue;
    }
    const end = at + part.value.length;
    if (!part.removed) {
      while (p < pieces.length && pieces[p]!.to <= at) p++;
      // A piece cut by the change (new_string keeps only one "-" of a "--" that matched an em dash) is
      // new text, written as new_string has it.
      let pos = at;
      for (let q = p; q < pieces.length && pieces[q]!.from < end; q++) {
        const piece = pieces[q]!;
        if (piece.from < pos || piece.to > end) continue;
        out += old.slice(pos, piece.from) + piece.file;
        pos = piece.to;
      }
      out += old.slice(pos, end);
    }
    at = end;
  }
  return out;
}

/** Pieces of one character each, for rungs whose normalisation keeps every offset. */
function charPieces(region: string): Piece[] {
  return Array.from({ length: region.length }, (_, i) => ({ from: i, to: i + 1, file: region[i]! }));
}

/**
 * new_string with the file's quote characters. The parts new_string keeps from old_string take the exact
 * characters of the matched region, so a file that mixes styles (straight delimiters around a curly
 * apostrophe) keeps each quote as it was; only the text in between is new, and it follows the region's
 * style when the region has just one.
 */
function matchQuoteStyle(newString: string, oldString: string, region: string): string {
  return keepFileText(oldString, newString, charPieces(region), (text, before) =>
    styleInserted(text, region, before),
  );
}

// ---- look-alikes ----

/**
 * ASCII a model types for a character that looks like it, longest first: old_string's ASCII matches
 * itself or any of the characters listed.
 */
const LOOK_ALIKES: ReadonlyArray<readonly [string, string]> = [
  ["...", "\u2026"],
  ["---", "\u2014"],
  ["--", "\u2014\u2013"],
  ["-", "\u2010\u2011\u2012\u2013\u2014\u2212"],
  [" ", "\u00a0\u202f\u2007"],
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** old_string cut into pieces: each ASCII look-alike with the characters it stands for, else one character. */
function lookAlikeTokens(old: string): Array<{ from: number; to: number; alternatives: string[] }> {
  const tokens: Array<{ from: number; to: number; alternatives: string[] }> = [];
  for (let i = 0; i < old.length; ) {
    const entry = LOOK_ALIKES.find(([ascii]) => old.startsWith(ascii, i));
    const text = entry ? entry[0] : old[i]!;
    tokens.push({ from: i, to: i + text.length, alternatives: [text, ...(entry ? [...entry[1]] : [])] });
    i += text.length;
  }
  return tokens;
}

/** ASCII in old_string matching the file's no-break spaces, dashes and ellipses. */
function lookAlikeRung(view: string, old: string, newString: string): LadderResult {
  const tokens = lookAlikeTokens(old);
  if (tokens.every((t) => t.alternatives.length === 1)) return { ok: false, reason: "not-found" };
  const pattern = new RegExp(
    tokens
      .map((t) =>
        t.alternatives.length === 1
          ? escapeRegExp(t.alternatives[0]!)
          : `(?:${t.alternatives.map(escapeRegExp).join("|")})`,
      )
      .join(""),
    "g",
  );
  const starts: number[] = [];
  for (let m = pattern.exec(view); m && starts.length <= MAX_LISTED_MATCHES; m = pattern.exec(view)) {
    starts.push(m.index);
    pattern.lastIndex = m.index + 1;
  }
  if (starts.length === 0) return { ok: false, reason: "not-found" };
  if (starts.length > 1) {
    return {
      ok: false,
      reason: "ambiguous",
      rung: "look-alikes",
      lines: starts.map((s) => lineNumberAt(view, s)),
    };
  }
  // The alternatives of a token start with different characters, so the match is read back token by token.
  const pieces: Piece[] = [];
  let pos = starts[0]!;
  for (const token of tokens) {
    const file = token.alternatives.find((a) => view.startsWith(a, pos))!;
    pieces.push({ from: token.from, to: token.to, file });
    pos += file.length;
  }
  return {
    ok: true,
    rung: "look-alikes",
    splices: [{ start: starts[0]!, end: pos, text: keepFileText(old, newString, pieces) }],
  };
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
  /**
   * A line new_string adds or changes, rewritten for the file, or a message when it cannot be; `region`
   * holds the matched file lines, `at` the index among them where the line lands, and `index` the
   * line's own index in new_string.
   */
  rewrite(line: string, region: readonly string[], at: number, index: number): string | { error: string };
}

const trailingWhitespace: LineRung = {
  rung: "trailing-whitespace",
  begin: () => ({
    equal: (a, b) => a.trimEnd() === b.trimEnd(),
    rewrite: (line) => line,
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
      rewrite(line) {
        if (isBlank(line)) return line;
        if (add) return add + line;
        if (line.startsWith(remove)) return line.slice(remove.length);
        return {
          error: `new_string cannot be shifted left by ${JSON.stringify(remove)}: the line ${JSON.stringify(line)} is indented less than that`,
        };
      },
    };
  },
};

/** Tab widths tried, in order, when old_string and the file indent with different characters. */
const TAB_WIDTHS = [4, 8, 2] as const;

/** Columns an indentation spans with tab stops every `tabWidth`; undefined when it holds other blanks. */
function indentWidth(indent: string, tabWidth: number): number | undefined {
  let column = 0;
  for (const c of indent) {
    if (c === "\t") column = (Math.floor(column / tabWidth) + 1) * tabWidth;
    else if (c === " ") column++;
    else return undefined;
  }
  return column;
}

/** How old_string's indentation maps onto the file's in the indentation-level rung. */
interface LevelFit {
  tabWidth: number;
  /** Columns the file's lines are deeper than old_string's (old_string copied dedented). */
  shift: number;
  /** old_string's first line starts mid-line, at the file line's text: its depth is not compared. */
  midLine: boolean;
}

const depthOf = (line: string, tabWidth: number) => indentWidth(indentOf(line), tabWidth);

/** Whether every line of old_string is as deep as the file's line under a fit, and says the same. */
function fits(region: readonly string[], old: readonly string[], fit: LevelFit): boolean {
  return region.every((line, i) => {
    const typed = old[i]!;
    if (isBlank(typed)) return isBlank(line);
    if (line.trimStart() !== typed.trimStart()) return false;
    if (i === 0 && fit.midLine) return true;
    const depth = depthOf(line, fit.tabWidth);
    const typedDepth = depthOf(typed, fit.tabWidth);
    return depth !== undefined && typedDepth !== undefined && depth === typedDepth + fit.shift;
  });
}

/**
 * The one way old_string's indentation maps onto the file's: depth for depth under a tab width first.
 * Else old_string was copied shifted as a whole, or starts mid-line (at a line's text, as exact matches
 * may) with the lines below at their own depth, which is the reading preferred; a mapping is taken only
 * when it is the one that fits, since the depth of the lines new_string adds depends on it.
 */
function levelFit(region: readonly string[], old: readonly string[]): LevelFit | undefined {
  for (const tabWidth of TAB_WIDTHS) {
    const fit = { tabWidth, shift: 0, midLine: false };
    if (fits(region, old, fit)) return fit;
  }
  const midLineCase = indentOf(old[0]!) === "" && indentOf(region[0]!) !== "";
  const found: LevelFit[] = [];
  for (const midLine of midLineCase ? [false, true] : [false]) {
    const k = old.findIndex((l, i) => !isBlank(l) && !(midLine && i === 0));
    if (k === -1) continue;
    for (const tabWidth of TAB_WIDTHS) {
      const depth = depthOf(region[k]!, tabWidth);
      const typedDepth = depthOf(old[k]!, tabWidth);
      if (depth === undefined || typedDepth === undefined) continue;
      const fit = { tabWidth, shift: depth - typedDepth, midLine };
      // A mid-line reading that maps depths as a whole-copy reading does is that same mapping.
      const known = found.some((f) => f.tabWidth === tabWidth && f.shift === fit.shift);
      if (!known && fits(region, old, fit)) found.push(fit);
    }
  }
  const unshifted = found.filter((f) => f.shift === 0);
  if (unshifted.length === 1) return unshifted[0];
  return found.length === 1 ? found[0] : undefined;
}

/**
 * Indentation compared by level: old_string indents with spaces where the file has tabs (or the
 * reverse), and every line is as deep as the file's under one tab width. The lines new_string adds or
 * changes get the same depth in the file's own characters, those of the nearest indented line of the
 * region: a Makefile recipe keeps its tab.
 */
const indentationLevel: LineRung = {
  rung: "indentation-level",
  begin(file, first, old) {
    // Most candidates fail on their first line: checked before anything that scans the whole region.
    const k = old.findIndex((l) => !isBlank(l));
    if (file.text[first + k]?.trimStart() !== old[k]!.trimStart()) return undefined;
    const region = file.text.slice(first, first + old.length);
    // Only a tab on one side makes this rung's case; other indentation drift belongs to other rungs.
    const tabVersusSpaces = region.some((l, i) => {
      const [own, typed] = [indentOf(l), indentOf(old[i]!)];
      return own !== typed && `${own}${typed}`.includes("\t");
    });
    const fit = tabVersusSpaces ? levelFit(region, old) : undefined;
    if (!fit) return undefined;
    const { tabWidth, shift, midLine } = fit;
    return {
      equal: () => true,
      rewrite(line, lines, at, index) {
        const indent = indentOf(line);
        const typedDepth = indentWidth(indent, tabWidth);
        if (isBlank(line) || typedDepth === undefined) return line;
        // new_string starts where old_string did: mid-line, after the file's indentation.
        if (midLine && index === 0) return indentOf(lines[0]!) + line;
        const depth = typedDepth + shift;
        if (depth < 0) {
          return {
            error: `new_string's line ${JSON.stringify(line)} is indented less than old_string's shallowest line, so it has no place in the file's indentation`,
          };
        }
        // Nearest lines first: a line as deep as an existing one is indented exactly as that one is
        // (tabs then alignment spaces included); a new depth takes the nearest indented line's characters.
        const near = [...lines.slice(0, at).reverse(), ...lines.slice(at)].filter((l) => !isBlank(l));
        const same = near.find((l) => indentWidth(indentOf(l), tabWidth) === depth);
        const styled = near.find((l) => /^[ \t]/.test(l));
        const ownIndent =
          same !== undefined
            ? indentOf(same)
            : styled?.startsWith("\t")
              ? "\t".repeat(Math.floor(depth / tabWidth)) + " ".repeat(depth % tabWidth)
              : " ".repeat(depth);
        return ownIndent + line.slice(indent.length);
      },
    };
  },
};

/**
 * new_string's lines for a region matched line by line: the lines new_string keeps from old_string are
 * the file's own lines (trailing spaces, indentation and all); the lines it adds or changes are rewritten
 * by the rung.
 */
function keepFileLines(
  matcher: LineMatcher,
  region: readonly string[],
  oldLines: string[],
  newLines: string[],
): string[] | { error: string } {
  const out: string[] = [];
  let at = 0;
  for (const part of diffArrays(oldLines, newLines)) {
    if (part.removed) at += part.value.length;
    else if (!part.added) {
      out.push(...region.slice(at, at + part.value.length));
      at += part.value.length;
    } else {
      for (const line of part.value) {
        const text = matcher.rewrite(line, region, at, out.length);
        if (typeof text !== "string") return text;
        out.push(text);
      }
    }
  }
  return out;
}

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
  // The empty string after a final newline is no line: a blank old_string line must not match it.
  const lineCount = view.endsWith("\n") ? file.text.length - 1 : file.text.length;
  for (let first = 0; first + cut.length <= lineCount; first++) {
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
  const last = first + cut.length - 1;
  const start = file.starts[first]!;
  let end = file.starts[last]! + file.text[last]!.length;
  // old_string's final newline matched the end of a file that has none: new_string's final newline
  // stands for that same absent one, so none is added.
  const newlineAfter = takesNewline && end < view.length;
  if (newlineAfter) end += 1;
  const keepsNewline = takesNewline && newString.endsWith("\n");
  const newLines = (keepsNewline ? newString.slice(0, -1) : newString).split("\n");
  const lines = keepFileLines(matcher, file.text.slice(first, last + 1), cut, newLines);
  if (!Array.isArray(lines))
    return { ok: false, reason: "unusable", rung: rungDef.rung, message: lines.error };
  const text = lines.join("\n") + (keepsNewline && newlineAfter ? "\n" : "");
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
  for (const rungDef of [trailingWhitespace, indentation, indentationLevel]) {
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

  const lookAlike = lookAlikeRung(view, old, replacement);
  if (lookAlike.ok || lookAlike.reason !== "not-found") return lookAlike;

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
