import { isUtf8 } from "node:buffer";
import {
  decodeLegacy,
  decodeStateful,
  detectLegacyEncoding,
  detectStatefulEncoding,
  encodeLegacy,
  isLegacy,
  isMultiByte,
  isStateful,
  type LegacyEncoding,
  legacyUnencodable,
  type StatefulEncoding,
} from "./legacy-encodings.js";

/**
 * The file codec. Tools see a file as its "view": the decoded text with CRLF shown as LF, exactly what
 * Read prints. Edits are made against the view and spliced into the ORIGINAL bytes, so every byte outside
 * an edited region is kept as it was: the encoding, the BOM, each line's own ending (mixed files stay
 * mixed) and the final newline.
 */

/**
 * "latin1" is the legacy 8-bit fallback, read as Windows-1252 (what the WHATWG "latin1" label means):
 * bytes 0x80-0x9F are the euro sign, curly quotes and dashes real legacy files use, not C1 controls.
 * Legacy non-Latin encodings (Shift_JIS, GB18030, KOI8-R...) are detected and decoded by
 * `legacy-encodings.ts`; stateful ones (ISO-2022-JP, UTF-7) are read but never written.
 */
export type Encoding = "utf8" | "utf16le" | "utf16be" | "latin1" | LegacyEncoding | StatefulEncoding;
/** "cr" is the classic Mac style: lone CRs and no LF anywhere. */
export type LineEndingStyle = "lf" | "crlf" | "cr" | "mixed";
export type Newline = "\n" | "\r\n" | "\r";

export interface TextFormat {
  encoding: Encoding;
  bom: boolean;
  /** The style of the file's line breaks; a file without any counts as LF. */
  eol: LineEndingStyle;
  /** The ending to use for new lines: the file's own one, the more common one when mixed. */
  newline: Newline;
  finalNewline: boolean;
}

export interface DecodedText {
  bytes: Buffer;
  /** The decoded text with every CRLF (or, in a CR file, every CR) shown as LF. */
  view: string;
  format: TextFormat;
  /** Ascending view offsets of the LFs that are CRLF in the file. */
  crlfAt: readonly number[];
  /** Why the file cannot be written back in its encoding without changing bytes outside an edit. */
  unwritable?: string;
}

/**
 * Largest file the tools decode whole. Read streams bigger text files page by page; Write and Edit
 * refuse them (a tool that rewrites a file holds it in memory twice).
 */
export const MAX_DECODED_FILE_BYTES = 64 * 1024 * 1024;
/** How many leading bytes decide whether a file is text. */
const SNIFF_BYTES = 8192;
/** Share of control characters above which an 8-bit file is taken for binary, not legacy text. */
const MAX_CONTROL_SHARE = 0.05;
/**
 * Share of characters whose high byte is zero above which BOM-less data with NULs is taken for UTF-16:
 * true of Latin-script text, never of a file whose other byte of each pair is also zero somewhere.
 */
const MIN_UTF16_ZERO_SHARE = 0.5;

const BOMS: ReadonlyArray<{ encoding: Encoding; bytes: readonly number[] }> = [
  { encoding: "utf8", bytes: [0xef, 0xbb, 0xbf] },
  { encoding: "utf16le", bytes: [0xff, 0xfe] },
  { encoding: "utf16be", bytes: [0xfe, 0xff] },
];

function bomOf(bytes: Buffer): (typeof BOMS)[number] | undefined {
  return BOMS.find((b) => b.bytes.every((v, i) => bytes[i] === v));
}

export function bomBytes(encoding: Encoding): Buffer {
  return Buffer.from(BOMS.find((b) => b.encoding === encoding)?.bytes ?? []);
}

/** Control characters that never appear in text (tab, LF, VT, FF, CR and ESC do). */
function isStrayControl(byte: number): boolean {
  return (
    (byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 11 && byte !== 12 && byte !== 13 && byte !== 27) ||
    byte === 0x7f
  );
}

/** Too many control characters for text; `units` are bytes or UTF-16 code units. */
function tooManyControls(units: ArrayLike<number>, isControl: (unit: number) => boolean): boolean {
  let control = 0;
  for (let i = 0; i < units.length; i++) if (isControl(units[i]!)) control++;
  return control > units.length * MAX_CONTROL_SHARE;
}

/** In UTF-16 text, also the C1 controls and the noncharacters that byte-swapped data decodes to. */
const isStrayUtf16 = (unit: number) =>
  isStrayControl(unit) || (unit >= 0x80 && unit < 0xa0) || unit === 0xfffe || unit === 0xffff;

/**
 * UTF-16 without a BOM (written by some Windows tools): the zero high byte of Latin-script characters
 * sits at every odd offset (LE) or every even one (BE), and the other byte of a pair is never zero.
 * Decided from the sample, then confirmed by decoding it: no NULs, few control characters.
 */
function utf16WithoutBom(sample: Buffer): "utf16le" | "utf16be" | undefined {
  const pairs = sample.length >> 1;
  if (pairs < 2) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs; i++) {
    if (sample[2 * i] === 0) evenZeros++;
    if (sample[2 * i + 1] === 0) oddZeros++;
  }
  const encoding =
    evenZeros === 0 && oddZeros >= pairs * MIN_UTF16_ZERO_SHARE
      ? "utf16le"
      : oddZeros === 0 && evenZeros >= pairs * MIN_UTF16_ZERO_SHARE
        ? "utf16be"
        : undefined;
  if (!encoding) return undefined;
  const text = decodeBody(sample.subarray(0, 2 * pairs), encoding);
  const units = Array.from({ length: text.length }, (_, i) => text.charCodeAt(i));
  return units.includes(0) || tooManyControls(units, isStrayUtf16) ? undefined : encoding;
}

/** True when the bytes look like text in some encoding the codec reads; false for binary data. */
export function looksLikeText(bytes: Buffer): boolean {
  if (bomOf(bytes)) return true;
  const sample = bytes.subarray(0, SNIFF_BYTES);
  if (sample.includes(0)) return utf16WithoutBom(sample) !== undefined;
  return !tooManyControls(sample, isStrayControl);
}

/**
 * The encoding of a whole file, or (with `partial`) of a file from its first bytes, where a multi-byte
 * character may be cut at the end of the sample.
 */
export function detectEncoding(bytes: Buffer, partial = false): { encoding: Encoding; bom: boolean } {
  const bom = bomOf(bytes);
  if (bom) return { encoding: bom.encoding, bom: true };
  // A whole file of UTF-16 has an even length; a sample may be cut anywhere.
  const sniffed = bytes.subarray(0, SNIFF_BYTES);
  const utf16 = (partial || bytes.length % 2 === 0) && sniffed.includes(0) && utf16WithoutBom(sniffed);
  if (utf16) return { encoding: utf16, bom: false };
  const sample = partial ? bytes.subarray(0, Math.max(0, bytes.length - 3)) : bytes;
  if (isUtf8(sample)) {
    // Stateful encodings are 7-bit, so valid UTF-8: only an escape byte or a leading "+" asks for a look.
    const suspect = bytes[0] === 0x2b || sniffed.includes(0x1b);
    return { encoding: (suspect && detectStatefulEncoding(bytes)) || "utf8", bom: false };
  }
  const legacy = detectLegacyEncoding(bytes, (head) => decodeBody(head, "latin1"), !partial);
  return { encoding: legacy ?? "latin1", bom: false };
}

/** Windows-1252's characters for bytes 0x80-0x9F; its five unassigned bytes stand for themselves. */
const CP1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";
const CP1252_BYTE = new Map([...CP1252_HIGH].map((c, i) => [c, 0x80 + i]));
/** Characters Windows-1252 has no byte for. */
const NOT_CP1252 = /[^\u0000-\u007f\u00a0-\u00ff]/gu;

function decodeBody(body: Buffer, encoding: Encoding): string {
  if (isLegacy(encoding)) return decodeLegacy(body, encoding);
  if (isStateful(encoding)) return decodeStateful(body, encoding) ?? body.toString("latin1");
  if (encoding === "latin1")
    return body.toString("latin1").replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
  if (encoding !== "utf16be") return body.toString(encoding);
  const swapped = Buffer.from(body.subarray(0, body.length & ~1));
  return swapped.swap16().toString("utf16le");
}

/** Encodes text (no BOM) in one of the codec's encodings. */
export function encodeBody(text: string, encoding: Encoding): Buffer {
  if (isLegacy(encoding)) return encodeLegacy(text, encoding);
  if (isStateful(encoding))
    throw new Error(`${encoding} is stateful and is never written (callers check DecodedText.unwritable)`);
  if (encoding === "latin1") {
    const bytes = text.replace(NOT_CP1252, (c) => String.fromCharCode(CP1252_BYTE.get(c) ?? 0x3f));
    return Buffer.from(bytes, "latin1");
  }
  if (encoding !== "utf16be") return Buffer.from(text, encoding);
  return Buffer.from(text, "utf16le").swap16();
}

/** The distinct characters of `text` that `encoding` cannot store (none for the Unicode encodings). */
export function unencodable(text: string, encoding: Encoding): string[] {
  if (isLegacy(encoding)) return legacyUnencodable(text, encoding);
  if (isStateful(encoding)) return [...new Set(text.match(/[^\p{ASCII}]/gu))];
  if (encoding !== "latin1") return [];
  return [...new Set(text.match(NOT_CP1252) ?? [])].filter((c) => !CP1252_BYTE.has(c));
}

/** A classic Mac text: lone CRs break its lines, and it has no LF anywhere. */
const isClassicMac = (text: string) => !text.includes("\n") && text.includes("\r");

/**
 * The view (what Read shows, and what edits are made against) of text about to be written: CRLFs, or
 * in a classic Mac text every CR, as LF. Exactly how decodeText will see the written file.
 */
export function viewOf(text: string): string {
  return isClassicMac(text) ? text.replaceAll("\r", "\n") : text.replaceAll("\r\n", "\n");
}

/**
 * Where the text of `bytes` starts (0, or 3 after a BOM) when decodeText would read them as valid UTF-8
 * without any CR; undefined otherwise. The view is then exactly the UTF-8 text of the bytes from there,
 * with eol "lf": a well-formed string occurs in the view where its UTF-8 bytes occur in the file (UTF-8 is
 * self-synchronising), and a line is the text between two LF bytes, so callers can find lines and edits in
 * the bytes without decoding the whole file. Costs a search for CR and one UTF-8 validation of the bytes.
 */
export function plainUtf8Start(bytes: Buffer): number | undefined {
  const bom = bomOf(bytes);
  // decodeText refuses NULs in the head of BOM-less text that is not UTF-16.
  if (!bom && bytes.subarray(0, SNIFF_BYTES).includes(0)) return undefined;
  if (!looksLikeText(bytes) || bytes.includes(0x0d)) return undefined;
  if (detectEncoding(bytes).encoding !== "utf8") return undefined;
  if (!bom) return 0; // detectEncoding validated the whole file.
  // A UTF-8 BOM is trusted by detectEncoding; invalid bytes after it would decode to U+FFFD.
  const start = bom.bytes.length;
  return isUtf8(bytes.subarray(start)) ? start : undefined;
}

/** plainUtf8Start without a BOM: the view is the UTF-8 text of all the bytes. */
export function isPlainUtf8(bytes: Buffer): boolean {
  return plainUtf8Start(bytes) === 0;
}

/** Decodes a text file. Returns undefined for binary data (callers name the type). */
export function decodeText(bytes: Buffer): DecodedText | undefined {
  if (!looksLikeText(bytes)) return undefined;
  const { encoding, bom } = detectEncoding(bytes);
  // NULs in 8-bit text: the sample looked like UTF-16, but the whole file (of odd length) is not.
  if (!bom && encoding !== "utf16le" && encoding !== "utf16be" && bytes.subarray(0, SNIFF_BYTES).includes(0))
    return undefined;
  const raw = decodeBody(bytes.subarray(bom ? bomBytes(encoding).length : 0), encoding);
  const crlfAt: number[] = [];
  let view = raw;
  // A classic Mac file: its CRs show as LFs, one for one, so every offset stays where it was.
  const loneCr = isClassicMac(raw);
  if (loneCr) view = raw.replaceAll("\r", "\n");
  else if (raw.includes("\r\n")) {
    const parts = raw.split("\r\n");
    let offset = 0;
    for (let i = 0; i < parts.length - 1; i++) {
      offset += parts[i]!.length;
      crlfAt.push(offset);
      offset += 1;
    }
    view = parts.join("\n");
  }
  const bareLf = crlfAt.length === 0 ? 0 : countLf(view) - crlfAt.length;
  return {
    bytes,
    view,
    crlfAt,
    unwritable: unwritableReason(bytes, raw, encoding),
    format: {
      encoding,
      bom,
      eol: loneCr ? "cr" : crlfAt.length === 0 ? "lf" : bareLf > 0 ? "mixed" : "crlf",
      newline: loneCr ? "\r" : crlfAt.length > bareLf ? "\r\n" : "\n",
      finalNewline: view.endsWith("\n"),
    },
  };
}

/** Why bytes decoded as `raw` cannot be written back in their encoding, if they cannot. */
function unwritableReason(bytes: Buffer, raw: string, encoding: Encoding): string | undefined {
  if (isStateful(encoding)) {
    return `it is ${encoding}, a stateful encoding (the bytes of each character depend on the escape sequences before it), which cc-tools reads but does not write`;
  }
  if (isLegacy(encoding) && !encodeLegacy(raw, encoding).equals(bytes)) {
    return `it reads as ${encoding}, but encoding the decoded text again does not give back the same bytes (some byte sequences have no character of their own in ${encoding}), so writing it could change bytes outside the edit`;
  }
  return undefined;
}

function countLf(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Number of CRLFs before view offset `offset`. */
function crlfBefore(crlfAt: readonly number[], offset: number): number {
  let lo = 0;
  let hi = crlfAt.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (crlfAt[mid]! < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A replacement of view[start, end) by `text` (LF line breaks). */
export interface Splice {
  start: number;
  end: number;
  text: string;
}

/**
 * The ending new lines get in a splice: in a mixed file, the ending of the first line break at or after
 * the splice's start (the region's own style); otherwise the file's.
 */
function spliceNewline(file: DecodedText, start: number): string {
  if (file.format.eol !== "mixed") return file.format.newline;
  const lf = file.view.indexOf("\n", start);
  if (lf === -1) return file.format.newline;
  const i = crlfBefore(file.crlfAt, lf);
  return file.crlfAt[i] === lf ? "\r\n" : "\n";
}

/** Applies ascending, non-overlapping splices to `view[from, to)` as text (LF line breaks). */
export function applySplices(view: string, splices: readonly Splice[], from = 0, to = view.length): string {
  let out = "";
  let pos = from;
  for (const s of splices) {
    out += view.slice(pos, s.start) + s.text.replaceAll("\r\n", "\n");
    pos = s.end;
  }
  return out + view.slice(pos, to);
}

/**
 * Applies ascending, non-overlapping splices to the original bytes. Only the spliced regions are
 * re-encoded; every other byte is copied as it was.
 */
export function spliceBytes(file: DecodedText, splices: readonly Splice[]): Buffer {
  return Buffer.concat(splicePieces(file, splices));
}

/**
 * The new content as pieces in order: views of the original bytes (not copies) between re-encoded
 * splices. A writer can write them one after the other, so a large file is not copied to change a line.
 */
export function splicePieces(file: DecodedText, splices: readonly Splice[]): Buffer[] {
  const { bytes, view, crlfAt, format, unwritable } = file;
  if (unwritable) throw new Error(`cannot splice into this file: ${unwritable}`);
  const { encoding } = format;
  const bom = format.bom ? bomBytes(encoding).length : 0;
  const unit = encoding === "utf16le" || encoding === "utf16be" ? 2 : 1;
  // Single-byte text (ASCII, latin1, KOI8-R...) maps characters to bytes one to one; UTF-8 and the
  // multi-byte legacy encodings need counting (the latter exact because the file round-trips).
  const counted = encoding === "utf8" || (isLegacy(encoding) && isMultiByte(encoding));
  const oneToOne = !counted || bytes.length - bom === view.length + crlfAt.length;
  const byteLength = (text: string) =>
    isLegacy(encoding) ? encodeLegacy(text, encoding).length : Buffer.byteLength(text, "utf8");
  let viewPos = 0;
  let charBytes = 0;
  const byteAt = (offset: number) => {
    charBytes += oneToOne ? offset - viewPos : byteLength(view.slice(viewPos, offset));
    viewPos = offset;
    const cr = crlfBefore(crlfAt, offset);
    return bom + (oneToOne ? charBytes * unit : charBytes) + cr * unit;
  };
  const pieces: Buffer[] = [];
  let copied = 0;
  for (const splice of splices) {
    const from = byteAt(splice.start);
    const to = byteAt(splice.end);
    pieces.push(bytes.subarray(copied, from));
    const text = splice.text.replaceAll("\r\n", "\n");
    const newline = spliceNewline(file, splice.start);
    pieces.push(encodeBody(newline === "\n" ? text : text.replaceAll("\n", newline), encoding));
    copied = to;
  }
  pieces.push(bytes.subarray(copied));
  return pieces;
}

/** Encodes a whole text (LF line breaks unless it carries its own CRLFs or CRs) in a format. */
export function encodeText(text: string, format: Pick<TextFormat, "encoding" | "bom" | "newline">): Buffer {
  const ownEndings = text.includes(format.newline === "\r\n" ? "\r\n" : "\r");
  const body = format.newline !== "\n" && !ownEndings ? text.replaceAll("\n", format.newline) : text;
  const encoded = encodeBody(body, format.encoding);
  return format.bom ? Buffer.concat([bomBytes(format.encoding), encoded]) : encoded;
}

/** The format of a file the tools create: UTF-8 without BOM and LF, unless .editorconfig says otherwise. */
export const DEFAULT_FORMAT: Pick<TextFormat, "encoding" | "bom" | "newline"> = {
  encoding: "utf8",
  bom: false,
  newline: "\n",
};
