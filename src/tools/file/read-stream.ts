import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { ToolError } from "../../core/errors.js";
import { detectEncoding } from "../../fs/codec.js";
import { isLegacy, isStateful, legacyDecodeStream } from "../../fs/legacy-encodings.js";
import { DEFAULT_LINE_LIMIT, type LineWindow } from "./read-page.js";

/**
 * Lines of a text file too large to decode whole, read from disk as a stream: only the requested page
 * and the next one are kept, so a multi-gigabyte log can be paged through like any other file.
 */

/** Bytes sampled to decide the encoding. */
const SAMPLE_BYTES = 64 * 1024;

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

/** The lines from `offset` (1-based) on, enough for this page and the next; `sample` is the file's head. */
export async function streamWindow(
  path: string,
  sample: Buffer,
  offset: number,
  limit = DEFAULT_LINE_LIMIT,
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
  const start = bom ? (encoding === "utf8" ? 3 : 2) : 0;
  const stream = isLegacy(encoding)
    ? createReadStream(path, { start })
    : createReadStream(path, { encoding, start });
  const input = isLegacy(encoding) ? stream.pipe(legacyDecodeStream(encoding)) : stream;
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const wanted = 2 * limit;
  const window: string[] = [];
  let number = 0;
  let reachesEnd = true;
  try {
    for await (const line of lines) {
      number++;
      if (number < offset) continue;
      if (window.length === wanted) {
        reachesEnd = false;
        break;
      }
      window.push(line);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return { window: { lines: window, firstLine: offset, reachesEnd }, linesSeen: number };
}
