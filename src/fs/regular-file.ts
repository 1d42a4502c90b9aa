import type { Stats } from "node:fs";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { InputError } from "../core/errors.js";

/**
 * The file tools work on regular files only. A device (/dev/zero), a FIFO or a socket reports size 0 and
 * never ends, or blocks forever, so reading one would exhaust memory or hang the call (and, through
 * Node's four I/O threads, every later file call of the process); replacing one by rename would swap a
 * device node for a plain file.
 */

/** What kind of non-regular file `info` describes, in words; undefined for a regular file or directory. */
export function specialFileKind(info: Stats): string | undefined {
  if (info.isFile() || info.isDirectory()) return undefined;
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/** Read size once stat's size has been read (files that report 0, or grew). */
const READ_CHUNK_BYTES = 1 << 20;

/** How much more than `limit` a bounded read takes, to tell "exactly the limit" from "over it". */
const OVERRUN_PROBE_BYTES = 1;

/**
 * Reads a regular file, at most `limit` bytes; undefined when it holds more. Sizes from stat can lie
 * (files in /proc report 0), so the bound is enforced while reading, not only checked before. The first
 * read goes into a buffer from `allocate` (a caller may hand out a reused one); when the file is read in
 * one go, the result is a view of that buffer.
 */
export async function readBounded(
  path: string,
  limit: number,
  allocate: (size: number) => Buffer = Buffer.allocUnsafe,
): Promise<Buffer | undefined> {
  // Non-blocking, and judged by the opened file itself: a FIFO swapped in after an earlier stat must
  // neither block the open nor be read.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    const special = specialFileKind(info);
    if (special)
      throw new InputError(
        `${path} is ${special}, not a regular file; the file tools read regular files only.`,
      );
    const chunks: Buffer[] = [];
    let total = 0;
    // Usually stat is right and one read of that size (plus the probe) takes it all.
    let next = Math.min(info.size, limit) + OVERRUN_PROBE_BYTES;
    for (let first = true; ; first = false) {
      const chunk = first ? allocate(next) : Buffer.allocUnsafe(next);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) return undefined;
      next = Math.min(READ_CHUNK_BYTES, limit + OVERRUN_PROBE_BYTES - total);
    }
  } finally {
    await handle.close();
  }
}
