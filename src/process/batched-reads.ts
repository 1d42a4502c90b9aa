/**
 * Reading a child's output in batches. A program that writes many small pieces (rg writes one per file with
 * matches) costs its reader one wake-up, one `read` and one 'data' event per piece: 30 to 40 µs of the main
 * thread each on a 2-core VM, taken from the child while it still runs. Here the pipe is left unread for a
 * few milliseconds after each read, so the pieces written meanwhile arrive in one.
 *
 * A hold should not make the writer wait. Node's child pipes are socket pairs, which take 280 small writes
 * (170 of 300 bytes, 44 of 4 KiB) before the writer waits, since each write is charged its own buffer's
 * overhead. So the hold is sized like a congestion window: it starts at FIRST_HOLD_MS, doubles up to
 * MAX_HOLD_MS while what one hold gathers stays within a budget (HOLD_BUDGET_PIECES writes and
 * HOLD_BUDGET_BYTES, at most 38 % of what the pipe takes at any write size), and halves when it does not; a
 * writer that sped up during a hold may wait for the rest of that one. Under MIN_HOLD_MS the writer is too
 * fast to gain from holding, and the pipe is read as it comes.
 */
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { getSystemErrorName } from "node:util";

/** The first hold, after the first read. */
export const FIRST_HOLD_MS = 1;

/** The longest hold. The child exiting ends a hold at once. */
export const MAX_HOLD_MS = 8;

/** A hold halved below this (the timers' granularity) is not tried again for this pipe. */
export const MIN_HOLD_MS = 1;

/** Most writes one hold may gather, counted by their line and NUL endings (see `readInBatches`). */
export const HOLD_BUDGET_PIECES = 100;

/** Most bytes one hold may gather; a read of this much also means a fast writer. */
export const HOLD_BUDGET_BYTES = 12 * 1024;

const NEWLINE = 0x0a;
const NUL = 0x00;

/** Whether `chunk` holds more than `most` newline and NUL bytes (counted with memchr, stopping early). */
function moreEndingsThan(chunk: Buffer, most: number): boolean {
  let count = 0;
  for (const byte of [NEWLINE, NUL]) {
    for (let at = chunk.indexOf(byte); at !== -1; at = chunk.indexOf(byte, at + 1)) {
      if (++count > most) return true;
    }
  }
  return false;
}

/** What batching did to one pipe. */
export interface BatchedReads {
  /** Holds so far. */
  holds: number;
  /** True once a hold of MIN_HOLD_MS gathered too much: the rest is read as it comes. */
  fastWriter: boolean;
}

/** The part of Node's pipe handle that starts and stops reading (libuv's uv_read_start / uv_read_stop). */
interface PipeHandle {
  reading?: boolean;
  readStart?: () => number;
  readStop?: () => number;
}

/**
 * Reads `stream` (an output pipe of `child`) in batches until the child exits, for a writer that ends every
 * write with a newline or a NUL, as rg does: the endings in a batch then bound the writes it gathered.
 *
 * Node's streams have no public way to stop reading a child's pipe (`pause()` keeps reading into the
 * stream's buffer), so this stops the handle underneath the stream, which still counts it as reading
 * (`reading` stays true, so the stream does not start it again itself). Where the handle is not what this
 * expects, reads are left as they are.
 */
export function readInBatches(stream: Readable, child: ChildProcess): BatchedReads {
  const stats: BatchedReads = { holds: 0, fastWriter: false };
  const handle = (stream as Readable & { _handle?: PipeHandle })._handle;
  if (typeof handle?.readStart !== "function" || typeof handle.readStop !== "function") return stats;
  let hold = FIRST_HOLD_MS;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  /** The next read gathers what came during a hold, and decides the next hold's length. */
  let afterHold = false;
  const release = () => {
    if (timer === undefined) return;
    clearTimeout(timer);
    timer = undefined;
    afterHold = true;
    // Node's own backpressure may have stopped the handle meanwhile; it then starts it again itself.
    if (stream.destroyed || !handle.reading) return;
    const error = handle.readStart!();
    if (error === 0) return;
    // As Node does when it cannot start reading: the stream ends with the error instead of waiting forever.
    stream.destroy(new Error(`reading the child's output failed (${getSystemErrorName(error)})`));
  };
  const finish = () => {
    done = true;
    stream.off("data", onData);
    release();
  };
  const onData = (chunk: Buffer) => {
    const large = chunk.length >= HOLD_BUDGET_BYTES;
    if (afterHold) {
      afterHold = false;
      const over = large || moreEndingsThan(chunk, HOLD_BUDGET_PIECES);
      hold = over ? hold / 2 : Math.min(MAX_HOLD_MS, hold * 2);
      if (hold < MIN_HOLD_MS) {
        stats.fastWriter = true;
        return finish();
      }
      // What the writer has written since is read at once; the next read starts the shorter hold.
      if (over) return;
    }
    if (done || timer !== undefined || large || !handle.reading || handle.readStop!() !== 0) return;
    stats.holds++;
    timer = setTimeout(release, hold);
  };
  stream.on("data", onData);
  if (child.exitCode !== null || child.signalCode !== null) finish();
  else child.once("exit", finish);
  stream.once("close", finish);
  return stats;
}
