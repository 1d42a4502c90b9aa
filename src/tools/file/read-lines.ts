import { decodeText, plainUtf8Start, type TextFormat } from "../../fs/codec.js";
import { keepsSnapshot } from "../../fs/read-state.js";
import { MAX_LINE_CHARS } from "./line-format.js";
import type { LineWindow } from "./read-page.js";

/**
 * The lines of a text file Read holds in memory (up to MAX_DECODED_FILE_BYTES). Decoding a file whole and
 * splitting it costs about six times its size (the view string, one string per line) for a page of a few
 * thousand lines; on a 10 MiB file that took the MCP server from 44 to 105 MB, pages V8 and malloc keep.
 * So a large file whose view is exactly its UTF-8 bytes (plainUtf8Start: valid UTF-8, no CR, no refused
 * NUL) is paged from its bytes: lines are counted as LF bytes, and only the lines of the window are
 * decoded, long ones only as far as a page shows them. Every other file (CRLF, legacy encodings, UTF-16,
 * small files) is decoded whole. Both give the same count, format and windows, so the same result.
 */

/**
 * Files from this size on are paged from their bytes when they can be. Read-state keeps the view of a
 * file up to 256 Ki characters (keepsSnapshot), which the lean path never builds, so it may only take
 * files whose view is surely longer: more than 768 KiB of UTF-8 (3 bytes a character at most). 1 MiB is
 * the round size above that; below it, decoding whole costs a few MB of garbage at most.
 */
export const LEAN_READ_MIN_BYTES = 1024 * 1024;
/** Most UTF-8 bytes per UTF-16 code unit: 3 (a 4-byte character is two units). */
const MAX_UTF8_BYTES_PER_UNIT = 3;
/**
 * Lines up to this many bytes are decoded whole. A longer one has more than LINE_HEAD_BYTES / 3 >
 * MAX_LINE_CHARS UTF-16 units, so formatLine cuts it, and only its first LINE_HEAD_BYTES are decoded: a
 * character cut at their end decodes wrongly, but the complete characters before it (at least
 * LINE_HEAD_BYTES - 3 bytes, so more than MAX_LINE_CHARS units) are exactly the start of the whole line's
 * string, and only its first MAX_LINE_CHARS units are kept, so the cut is the same (even inside a
 * surrogate pair).
 */
const LINE_HEAD_BYTES = (MAX_UTF8_BYTES_PER_UNIT + 1) * MAX_LINE_CHARS;
const LF = 0x0a;

export interface TextLines {
  format: Pick<TextFormat, "encoding" | "bom" | "eol">;
  /** Lines of the file, as Read numbers them: a last line without a newline counts; an empty file has none. */
  count: number;
  /** The view, for read-state; absent when the file was paged from its bytes (too large to be kept). */
  view?: string;
  /** At most `size` lines from line `first` (1-based, at most `count`) on. */
  window(first: number, size: number): LineWindow;
}

/**
 * The lines of a text file, undefined for binary data. `leanMinBytes` (tests only) moves the size from
 * which files are paged from their bytes, so both ways can be compared on the same file.
 */
export function textLines(bytes: Buffer, leanMinBytes = LEAN_READ_MIN_BYTES): TextLines | undefined {
  return (bytes.length >= leanMinBytes ? bytesLines(bytes) : undefined) ?? decodedLines(bytes);
}

function decodedLines(bytes: Buffer): TextLines | undefined {
  const decoded = decodeText(bytes);
  if (!decoded) return undefined;
  const { view, format } = decoded;
  const lines = view === "" ? [] : (view.endsWith("\n") ? view.slice(0, -1) : view).split("\n");
  return { format, count: lines.length, view, window: () => ({ lines, firstLine: 1, reachesEnd: true }) };
}

/** Lines found in the bytes of a plain UTF-8 file; undefined when its view is not its bytes. */
function bytesLines(bytes: Buffer): TextLines | undefined {
  const start = plainUtf8Start(bytes);
  if (start === undefined) return undefined;
  // Read-state keeps the view of a small file; a view this long (a UTF-16 unit is at most 3 bytes) is
  // surely not kept, so not building it changes nothing there.
  if (keepsSnapshot(Math.ceil((bytes.length - start) / MAX_UTF8_BYTES_PER_UNIT))) return undefined;
  let count = 0;
  for (let i = bytes.indexOf(LF, start); i !== -1; i = bytes.indexOf(LF, i + 1)) count++;
  if (bytes.length > start && bytes[bytes.length - 1] !== LF) count++;
  return {
    format: { encoding: "utf8", bom: start > 0, eol: "lf" },
    count,
    window(first, size) {
      let at = start;
      for (let skip = first - 1; skip > 0; skip--) at = bytes.indexOf(LF, at) + 1;
      const lines: string[] = [];
      const lengths: number[] = [];
      while (lines.length < size && at < bytes.length) {
        const lf = bytes.indexOf(LF, at);
        const end = lf === -1 ? bytes.length : lf;
        if (end - at <= LINE_HEAD_BYTES) {
          lines.push(bytes.toString("utf8", at, end));
          lengths.push(lines.at(-1)!.length);
        } else {
          lines.push(bytes.toString("utf8", at, at + LINE_HEAD_BYTES).slice(0, MAX_LINE_CHARS));
          lengths.push(utf16Length(bytes, at, end));
        }
        at = end + 1;
      }
      return { lines, lengths, firstLine: first, reachesEnd: first - 1 + lines.length === count };
    },
  };
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** Length in UTF-16 code units of the valid UTF-8 in bytes[from, to). */
function utf16Length(bytes: Buffer, from: number, to: number): number {
  let units = 0;
  for (let i = from; i < to; i++) {
    const byte = bytes[i]!;
    if (!isContinuation(byte)) units += byte >= 0xf0 ? 2 : 1;
  }
  return units;
}
