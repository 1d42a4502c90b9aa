import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { ToolError } from "../../core/errors.js";
import { detectEncoding } from "../../fs/codec.js";
import { isLegacy, isStateful, legacyDecoder } from "../../fs/legacy-encodings.js";
import { MAX_LINE_CHARS } from "./line-format.js";
import { type LineWindow, windowLines } from "./read-page.js";

/**
 * Lines of a text file too large to decode whole, read from disk in chunks: only the requested page and
 * the next one are kept, and of each line only what a page shows (MAX_LINE_CHARS), with its full length
 * counted. So memory stays bounded whatever the shape of the file: a multi-gigabyte log pages like any
 * other file, and a single line of a gigabyte (a sparse file, a minified dump) is one cut line, not a
 * string V8 cannot build.
 */

/** Bytes sampled to decide the encoding. */
const SAMPLE_BYTES = 64 * 1024;
/** Bytes read from disk at a time. */
const CHUNK_BYTES = 1024 * 1024;

export interface StreamedWindow {
  window: LineWindow;
  /** Lines read before stopping: the file's line count when the window reaches its end. */
  linesSeen: number;
}

/** The first bytes of a file, for sniffing its type and encoding. */
export async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Splits decoded text into lines at LF, CRLF or a lone CR (as readline does), keeping at most
 * MAX_LINE_CHARS of each line and counting the rest. `onLine` returns false to stop.
 */
class LineCutter {
  private kept: string[] = [];
  private keptChars = 0;
  private length = 0;
  /** The previous piece ended in CR: an LF at the start of the next one belongs to it. */
  private pendingCr = false;

  constructor(private readonly onLine: (text: string, length: number) => boolean) {}

  /** Feeds text; false once `onLine` asked to stop. */
  push(text: string): boolean {
    let start = 0;
    if (this.pendingCr && text.startsWith("\n")) start = 1;
    this.pendingCr = false;
    const breaks = /\r\n|\n|\r/g;
    breaks.lastIndex = start;
    for (let match = breaks.exec(text); match; match = breaks.exec(text)) {
      this.add(text.slice(start, match.index));
      if (match[0] === "\r" && match.index === text.length - 1) this.pendingCr = true;
      start = match.index + match[0].length;
      if (!this.emit()) return false;
    }
    this.add(text.slice(start));
    return true;
  }

  /** The end of the input: a last line without a line break still counts. */
  end(): void {
    if (this.length > 0) this.emit();
  }

  private add(piece: string): void {
    this.length += piece.length;
    const room = MAX_LINE_CHARS - this.keptChars;
    if (room <= 0 || piece === "") return;
    const part = piece.length > room ? piece.slice(0, room) : piece;
    this.kept.push(part);
    this.keptChars += part.length;
  }

  private emit(): boolean {
    const text = this.kept.join("");
    const { length } = this;
    this.kept = [];
    this.keptChars = 0;
    this.length = 0;
    return this.onLine(text, length);
  }
}

/** The lines from `offset` (1-based) on, enough for this page and the next; `sample` is the file's head. */
export async function streamWindow(
  path: string,
  sample: Buffer,
  offset: number,
  limit?: number,
): Promise<StreamedWindow> {
  const { encoding, bom } = detectEncoding(sample, true);
  if (encoding === "utf16be") {
    throw new ToolError(
      `${path} is UTF-16 BE text too large to read whole; convert it (iconv -f UTF-16BE) or search it with Grep.`,
    );
  }
  if (isStateful(encoding)) {
    throw new ToolError(
      `${path} is ${encoding} text too large to read whole; convert it (iconv -f ${encoding} -t UTF-8) or search it with Grep.`,
    );
  }
  const wanted = windowLines(limit);
  const lines: string[] = [];
  const lengths: number[] = [];
  let number = 0;
  let reachesEnd = true;
  const cutter = new LineCutter((text, length) => {
    number++;
    if (number < offset) return true;
    if (lines.length === wanted) {
      reachesEnd = false;
      return false;
    }
    lines.push(text);
    lengths.push(length);
    return true;
  });
  const decoder = isLegacy(encoding) ? legacyDecoder(encoding) : new StringDecoder(encoding);
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let position = bom ? (encoding === "utf8" ? 3 : 2) : 0;
    let going = true;
    while (going) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      going = cutter.push(decoder.write(buffer.subarray(0, bytesRead)));
    }
    if (going) {
      cutter.push(decoder.end());
      cutter.end();
    }
  } finally {
    await handle.close();
  }
  return { window: { lines, lengths, firstLine: offset, reachesEnd }, linesSeen: number };
}
