import { subscribe } from "node:diagnostics_channel";
import { bufferDropped } from "../process/memory.js";
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
 * go when this process spawns asynchronously (a Bash command, rg: everything but the few spawnSync calls,
 * which Node does not announce), which also spares every later fork its pages.
 *
 * Only buffers allocated here, each whole (never a slice of Node's shared pool), are kept, and only once
 * nothing uses them any more: whoever took one gives it back when the bytes are no longer referenced (a
 * write, after the hash of the content written from it was taken; a Read, once its page is built).
 */

/** Files from this size on are read into the kept buffer; smaller ones cost little to allocate. */
export const KEPT_BUFFER_MIN_BYTES = 1024 * 1024;
/** Largest buffer kept between calls. */
export const KEPT_BUFFER_MAX_BYTES = 32 * 1024 * 1024;
/** A kept buffer unused for this long is dropped (left to the garbage collector). */
export const KEPT_BUFFER_IDLE_MS = 2_000;
/**
 * Room a fresh buffer has beyond the size asked for, as a fraction of it (1/16: 0.8 MB for 12.5 MB), so
 * that a file growing edit by edit keeps fitting. Pages never written are never resident, so the room
 * costs address space only.
 */
const KEPT_BUFFER_GROWTH_SHIFT = 4;

let kept: Buffer | undefined;
let timer: NodeJS.Timeout | undefined;
/** Buffers handed out by takeBuffer(), so giveBuffer() keeps nothing else. */
const ours = new WeakSet<ArrayBufferLike>();

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
  if (reuse && reuse.length >= size) return reuse;
  // The room stops at the largest buffer kept, so a file just under that size still gets one kept.
  const room = Math.min(size + (size >> KEPT_BUFFER_GROWTH_SHIFT), KEPT_BUFFER_MAX_BYTES);
  const fresh = mappedBuffer(Math.max(size, room));
  ours.add(fresh.buffer);
  return fresh;
}

/** WebAssembly's page: the unit a WebAssembly.Memory is sized in. */
const WASM_PAGE_BYTES = 64 * 1024;

/**
 * A buffer of `bytes` in memory of its own, mapped from the system and unmapped when the buffer is
 * collected, so a large buffer let go gives its pages back at once. A Buffer from malloc does not: glibc
 * raises its mmap threshold to the size of the first large block freed, serves later ones of that size
 * from its heap, and returns heap memory only from the top, so the pages of a dropped 12.5 MB buffer could
 * stay resident. A WebAssembly.Memory is such a mapping (zero-filled, pages resident once written);
 * where one cannot be made (no WebAssembly, a limit on address space), malloc it is.
 */
function mappedBuffer(bytes: number): Buffer {
  if (mappable) {
    try {
      const pages = Math.ceil(bytes / WASM_PAGE_BYTES);
      const memory = new wasm!.Memory({ initial: pages, maximum: pages });
      return Buffer.from(memory.buffer, 0, bytes);
    } catch {
      // Each Memory reserves address space for guard regions (about 10 GiB on x64); under a limit on
      // address space V8 collects garbage before it gives up, so one failure means no more tries.
      mappable = false;
    }
  }
  return Buffer.allocUnsafeSlow(bytes);
}

let mappable = true;

/** The part of WebAssembly used here (the project's TypeScript libs do not declare it). */
const wasm = (
  globalThis as {
    WebAssembly?: { Memory: new (size: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };
  }
).WebAssembly;

/**
 * Gives back a buffer from takeBuffer() (or a view of one) once nothing refers to its bytes any more.
 * Each taken buffer is given back at most once.
 */
export function giveBuffer(bytes: Uint8Array): void {
  const whole = bytes.buffer;
  if (!ours.has(whole) || whole.byteLength > KEPT_BUFFER_MAX_BYTES) return;
  if (kept && kept.length >= whole.byteLength) return;
  drop();
  kept = Buffer.from(whole, 0, whole.byteLength);
  timer = setTimeout(expire, KEPT_BUFFER_IDLE_MS);
  timer.unref();
}

function drop(): void {
  clearTimeout(timer);
  kept = undefined;
  timer = undefined;
}

// Node publishes every asynchronous spawn (spawn, exec, execFile, fork) on this channel, before it forks.
subscribe("child_process", () => {
  if (kept) expire();
});

/** Lets an unused buffer go, and its memory with it at the next quiet moment (where a host collects). */
function expire(): void {
  drop();
  bufferDropped();
}
