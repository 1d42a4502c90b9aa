import { beforeFork } from "../process/forks.js";
import { settlePendingHashes } from "./read-state.js";

/**
 * One buffer the bytes of large files are read into, kept between calls. A Read of a large file and the
 * Edits that follow it then reuse the same pages instead of faulting in fresh ones (on some virtual
 * machines 10 MiB of fresh pages cost more than the rest of an Edit), and the process holds one buffer
 * of the file's size instead of one per call until the next garbage collection. That matters beyond the
 * buffers themselves: glibc serves a large allocation made after one was freed from its heap, which is
 * given back to the system only from its top, so each extra buffer alive at once can stay resident for
 * the life of the process.
 *
 * A spawn ends that: Node forks this process to spawn, and a fork write-protects every page it shares, so
 * each page of the kept buffer faults again on its next write, as a fresh page would (12.5 MB rewritten:
 * under 1 ms before a spawn, 57 ms after one, 47 ms for a fresh buffer). The kept buffer is therefore let
 * go when this process spawns (see src/process/forks.ts), its pages given back before the fork, which
 * spares the fork and the command's run the buffer's 12.5 MB of resident memory; a buffer that was out
 * during a spawn is let go when it comes back, for the same reason.
 *
 * Only buffers allocated here, each whole (never a slice of Node's shared pool), are kept, and only once
 * nothing uses them any more: whoever took one gives it back when the bytes are no longer referenced (a
 * write, after the hash of the content written from it was taken; a Read, after the hash of what it read).
 */

/** Files from this size on are read into the kept buffer; smaller ones cost little to allocate. */
export const KEPT_BUFFER_MIN_BYTES = 1024 * 1024;
/** Largest buffer kept between calls. */
export const KEPT_BUFFER_MAX_BYTES = 32 * 1024 * 1024;
/** A kept buffer unused for this long is dropped, and its pages given back to the system. */
export const KEPT_BUFFER_IDLE_MS = 2_000;
/**
 * Room a fresh buffer has beyond the size asked for, as a fraction of it (1/16: 0.8 MB for 12.5 MB), so
 * that a file growing edit by edit keeps fitting. Pages never written are never resident, so the room
 * costs address space only.
 */
const KEPT_BUFFER_GROWTH_SHIFT = 4;

let kept: Buffer | undefined;
let timer: NodeJS.Timeout | undefined;
/** Forks of this process so far (see beforeFork below). */
let forks = 0;
/**
 * Buffers handed out by takeBuffer() and not yet given back, so giveBuffer() keeps nothing else, with the
 * forks made before each was handed out: one out during a fork comes back with its pages shared with it.
 */
const ours = new WeakMap<ArrayBufferLike, number>();

/**
 * A buffer of at least `size` bytes for a read: the kept one when it is large enough, else a fresh one
 * with room to grow. Small sizes get an ordinary (pooled) buffer, which giveBuffer() ignores.
 */
export function takeBuffer(size: number): Buffer {
  if (size < KEPT_BUFFER_MIN_BYTES) return Buffer.allocUnsafe(size);
  // The last write's buffer comes back once its content is hashed: hash it now rather than allocate a
  // second buffer beside it.
  settlePendingHashes();
  const reuse = kept;
  drop();
  if (reuse && reuse.length >= size) {
    ours.set(reuse.buffer, forks);
    return reuse;
  }
  release(reuse?.buffer);
  // The room stops at the largest buffer kept, so a file just under that size still gets one kept.
  const room = Math.min(size + (size >> KEPT_BUFFER_GROWTH_SHIFT), KEPT_BUFFER_MAX_BYTES);
  const fresh = mappedBuffer(Math.max(size, room));
  ours.set(fresh.buffer, forks);
  return fresh;
}

/**
 * A buffer of `bytes` in memory of its own, mapped from the system, whose pages release() gives back at
 * once. A Buffer from malloc would not do: glibc raises its mmap threshold to the size of the first large
 * block freed, serves later ones of that size from its heap, and returns heap memory only from the top,
 * so the pages of a dropped 12.5 MB buffer could stay resident. A resizable ArrayBuffer is such a mapping
 * (V8 reserves its largest size and commits what it is resized to; pages are resident once written), and
 * shrinking it to nothing gives its pages back to the system on the spot (V8 discards them), with no
 * garbage collection to wait for. Where one cannot be made (a limit on address space), malloc it is.
 */
function mappedBuffer(bytes: number): Buffer {
  if (mappable) {
    try {
      return Buffer.from(new ResizableArrayBuffer(bytes, { maxByteLength: bytes }), 0, bytes);
    } catch {
      // Out of address space: one failure means no more tries.
      mappable = false;
    }
  }
  return Buffer.allocUnsafeSlow(bytes);
}

let mappable = true;

/** The resizable ArrayBuffer's part (the project's TypeScript libs, ES2022, do not declare it). */
type Resizable = ArrayBuffer & { readonly resizable?: boolean; resize?(bytes: number): void };
const ResizableArrayBuffer = ArrayBuffer as unknown as new (
  bytes: number,
  options: { maxByteLength: number },
) => Resizable;

/**
 * Gives the pages of a buffer from takeBuffer() back to the system now. Only for a buffer nothing refers
 * to any more (given back, and not handed out again): views of it read as empty afterwards.
 */
function release(whole: ArrayBufferLike | undefined): void {
  const resizable = whole as Resizable | undefined;
  if (resizable?.resizable) resizable.resize!(0);
}

/**
 * Gives back a buffer from takeBuffer() (or a view of one) once nothing refers to its bytes any more.
 * Each taken buffer is given back at most once. One that was out while this process forked is let go
 * instead of kept, as a kept one is at a fork: its pages are shared with the fork.
 */
export function giveBuffer(bytes: Uint8Array): void {
  const whole = bytes.buffer;
  const takenAfter = ours.get(whole);
  if (takenAfter === undefined) return;
  ours.delete(whole);
  const forked = takenAfter !== forks;
  if (forked || whole.byteLength > KEPT_BUFFER_MAX_BYTES || (kept && kept.length >= whole.byteLength)) {
    release(whole);
    return;
  }
  expire();
  kept = Buffer.from(whole, 0, whole.byteLength);
  timer = setTimeout(expire, KEPT_BUFFER_IDLE_MS);
  timer.unref();
}

function drop(): void {
  clearTimeout(timer);
  kept = undefined;
  timer = undefined;
}

beforeFork(() => {
  forks++;
  if (kept) expire();
});

/** Lets an unused buffer go, and its pages with it. */
function expire(): void {
  const unused = kept;
  drop();
  release(unused?.buffer);
}
