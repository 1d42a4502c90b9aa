import { lazyModule } from "../core/lazy-module.js";

/** Only files that are not UTF-8 need these. */
const iconvLite = lazyModule<typeof import("iconv-lite")>("iconv-lite");
const chardet = lazyModule<typeof import("chardet")>("chardet");

/**
 * Legacy non-Latin encodings: Japanese, Chinese, Korean, Cyrillic and Greek text from before UTF-8.
 * chardet proposes an encoding; it is taken only when the decoded text holds up (no undecodable bytes,
 * letters of the encoding's own script cased as words are, enough of them to tell neighbouring encodings
 * apart) and the same bytes do not read as Western text, because a wrong guess turns a Windows-1252 file
 * (what the codec assumes for every other 8-bit file) into mojibake.
 * Two stateful encodings are recognised by their escape sequences only, so they can be read and refused
 * for writing: a change to them cannot be spliced in without re-encoding the text around it.
 */

/** The stateless legacy encodings, named as chardet and the WHATWG name them. */
export type LegacyEncoding =
  | "Shift_JIS"
  | "EUC-JP"
  | "GB18030"
  | "Big5"
  | "EUC-KR"
  | "KOI8-R"
  | "windows-1251"
  | "ISO-8859-5"
  | "ISO-8859-7"
  | "windows-1253";
/** Encodings whose bytes for a character depend on escape sequences before it. */
export type StatefulEncoding = "ISO-2022-JP" | "UTF-7";

export function isStateful(encoding: string): encoding is StatefulEncoding {
  return encoding === "ISO-2022-JP" || encoding === "UTF-7";
}

/** The scripts whose letters each encoding exists to write. */
const CJK =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}\u3005\u30fc\uff00-\uffef]/u;
const SCRIPTS: Record<LegacyEncoding, RegExp> = {
  Shift_JIS: CJK,
  "EUC-JP": CJK,
  GB18030: CJK,
  Big5: CJK,
  "EUC-KR": CJK,
  "KOI8-R": /\p{Script=Cyrillic}/u,
  "windows-1251": /\p{Script=Cyrillic}/u,
  "ISO-8859-5": /\p{Script=Cyrillic}/u,
  "ISO-8859-7": /\p{Script=Greek}/u,
  "windows-1253": /\p{Script=Greek}/u,
};
/** Whether characters of a legacy encoding take more than one byte (so offsets need counting). */
export const isMultiByte = (encoding: LegacyEncoding) => SCRIPTS[encoding] === CJK;

export function isLegacy(encoding: string): encoding is LegacyEncoding {
  return Object.hasOwn(SCRIPTS, encoding);
}

/**
 * Least chardet confidence (0-100) taken. Multi-byte guesses score 100 on real text and 10 on a few
 * stray bytes that happen to pair up; single-byte guesses on real text score from about 15.
 */
const MIN_MULTI_BYTE_CONFIDENCE = 50;
const MIN_SINGLE_BYTE_CONFIDENCE = 10;
/** Share of the decoded non-ASCII letters that must belong to the encoding's script. */
const MIN_SCRIPT_SHARE = 0.8;
/** Share of a cased script's words that must be cased as words are. */
const MIN_WELL_CASED_SHARE = 0.8;
/**
 * Share of non-ASCII letters in words that also hold ASCII letters ("café", "Müller") above which the
 * bytes read as Western text in Windows-1252: Cyrillic, Greek or CJK bytes read that way give words of
 * accented letters only.
 */
const MAX_WESTERN_SHARE = 0.5;
/**
 * Least number of non-ASCII characters a guess must decode to: on fewer, the CJK encodings (which share
 * byte ranges) and the Cyrillic and Greek ones are told apart no better than by chance, and a wrong
 * guess is worse than Windows-1252, whose mojibake at least refuses non-Latin text on writes.
 */
const MIN_EVIDENCE_CHARS = 24;
/** Bytes chardet and the checks look at: plenty to tell encodings apart, and chardet's cost grows with it. */
const SAMPLE_BYTES = 16 * 1024;

/** Text with undecodable bytes (U+FFFD), C1 controls or private-use characters: not this encoding. */
const UNCLEAN = /[\ufffd\u0080-\u009f\ue000-\uf8ff]/u;

/** Letters Western European words take from Windows-1252 (not ƒ, ª or º, which CJK bytes produce). */
const WESTERN_LETTER = /[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0152\u0153\u0160\u0161\u0178\u017d\u017e]/u;

/**
 * Share of the non-ASCII letters that sit in plausible Western words: words that also hold ASCII letters
 * and no other non-ASCII letters than Western ones ("café", "Müller", not "ƒeƒXƒg").
 */
function westernShare(text: string): number {
  let letters = 0;
  let western = 0;
  for (const word of text.match(/\p{L}+/gu) ?? []) {
    const foreign = [...word.replace(/[A-Za-z]/g, "")];
    letters += foreign.length;
    if (foreign.length < word.length && foreign.every((c) => WESTERN_LETTER.test(c)))
      western += foreign.length;
  }
  return letters === 0 ? 1 : western / letters;
}

/**
 * Share of the words in a cased script (Cyrillic, Greek) written as most words are: in lower case, or
 * with one capital first. Bytes of another encoding read this way mix cases at random, and KOI8-R read
 * as Windows-1251 (or the reverse) turns lower case into capitals.
 */
function wellCasedShare(text: string, script: RegExp): number {
  const words = (text.match(/\p{L}{2,}/gu) ?? []).filter((w) => [...w].every((c) => script.test(c)));
  if (words.length === 0) return 0;
  return words.filter((w) => /^\p{Lu}?\p{Ll}+$/u.test(w)).length / words.length;
}

function scriptShare(text: string, script: RegExp): number {
  const letters = text.match(/(?![\x00-\x7f])\p{L}/gu) ?? [];
  if (letters.length === 0) return 0;
  return letters.filter((c) => script.test(c)).length / letters.length;
}

/** The decoded sample, without a character cut at its end when the sample is not the whole file. */
function decodeSample(sample: Buffer, encoding: LegacyEncoding, whole: boolean): string {
  const decoder = iconvLite().getDecoder(encoding, { stripBOM: false });
  return decoder.write(sample) + (whole ? (decoder.end() ?? "") : "");
}

/**
 * The legacy encoding of bytes that are not UTF-8, or undefined to read them as Windows-1252.
 * `windows1252` is how the sample reads in it; `whole` says whether the sample is the whole file.
 */
export function detectLegacyEncoding(
  bytes: Buffer,
  windows1252: (sample: Buffer) => string,
  whole: boolean,
): LegacyEncoding | undefined {
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const complete = whole && sample.length === bytes.length;
  if (westernShare(windows1252(sample)) > MAX_WESTERN_SHARE) return undefined;
  // Only chardet's best guess is checked: falling back to its weaker ones is how bytes of one CJK
  // encoding get read in another. A tie means it cannot tell them apart, and neither can we.
  const matches = chardet().analyse(sample);
  // Mostly UTF-8 with a stray invalid byte: no legacy encoding explains it better.
  if (matches[0]?.name.startsWith("UTF")) return undefined;
  const [best, runnerUp] = matches.filter((m) => isLegacy(m.name));
  if (!best || !isLegacy(best.name) || best.confidence === runnerUp?.confidence) return undefined;
  const encoding = best.name;
  const least = isMultiByte(encoding) ? MIN_MULTI_BYTE_CONFIDENCE : MIN_SINGLE_BYTE_CONFIDENCE;
  if (best.confidence < least) return undefined;
  const text = decodeSample(sample, encoding, complete);
  const script = SCRIPTS[encoding];
  if (UNCLEAN.test(text) || scriptShare(text, script) < MIN_SCRIPT_SHARE) return undefined;
  if ((text.match(/[^\x00-\x7f]/gu)?.length ?? 0) < MIN_EVIDENCE_CHARS) return undefined;
  if (!isMultiByte(encoding) && wellCasedShare(text, script) < MIN_WELL_CASED_SHARE) return undefined;
  return encoding;
}

/** The ISO-2022-JP escape sequences that switch to JIS X 0208 (ESC $ @, ESC $ B). */
const ISO_2022_JP_ESCAPE = /\x1b\$[@B]/;
/** The UTF-7 signature: its encoding of a byte-order mark. */
const UTF7_SIGNATURE = /^\+\/v[89+/]/;

/** A stateful encoding recognised in 7-bit bytes (which are also valid UTF-8), if one is. */
export function detectStatefulEncoding(bytes: Buffer): StatefulEncoding | undefined {
  const head = bytes.toString("latin1", 0, SAMPLE_BYTES);
  if (UTF7_SIGNATURE.test(head)) return "UTF-7";
  if (
    head.includes("\x1b") &&
    ISO_2022_JP_ESCAPE.test(head) &&
    decodeStateful(bytes, "ISO-2022-JP") !== undefined
  )
    return "ISO-2022-JP";
  return undefined;
}

export function decodeLegacy(bytes: Buffer, encoding: LegacyEncoding): string {
  return iconvLite().decode(bytes, encoding, { stripBOM: false });
}

export function encodeLegacy(text: string, encoding: LegacyEncoding): Buffer {
  return iconvLite().encode(text, encoding);
}

/** Decodes a stateful encoding; undefined when the bytes are not valid in it (or Node lacks the codec). */
export function decodeStateful(bytes: Buffer, encoding: StatefulEncoding): string | undefined {
  if (encoding === "UTF-7") return iconvLite().decode(bytes, "utf7", { stripBOM: true });
  try {
    return new TextDecoder("iso-2022-jp", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The distinct characters of `text` that a legacy encoding has no bytes for. */
export function legacyUnencodable(text: string, encoding: LegacyEncoding): string[] {
  const distinct = new Set(text.match(/[^\p{ASCII}]/gu) ?? []);
  return [...distinct].filter((c) => decodeLegacy(encodeLegacy(c, encoding), encoding) !== c);
}

/** iconv-lite's streaming decoder for a legacy encoding, for files too large to decode whole. */
export function legacyDecodeStream(encoding: LegacyEncoding): NodeJS.ReadWriteStream {
  return iconvLite().decodeStream(encoding, { stripBOM: false });
}

/** A decoder fed chunk by chunk (multi-byte characters may straddle chunks), like StringDecoder. */
export function legacyDecoder(encoding: LegacyEncoding): { write(chunk: Buffer): string; end(): string } {
  const decoder = iconvLite().getDecoder(encoding, { stripBOM: false });
  return { write: (chunk) => decoder.write(chunk), end: () => decoder.end() ?? "" };
}
