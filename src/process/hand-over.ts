import { write } from "node:fs";
import type { Writable } from "node:stream";
import { log } from "../core/log.js";

/**
 * Writes to the stdin of a child that is blocked reading it (a waiting shell), from a thread of libuv's
 * pool rather than from this process's main thread, when this process has work to do meanwhile.
 *
 * Linux wakes a reader of a pipe or socket synchronously: the writer is assumed to be about to sleep, so the
 * woken process is put on the writer's CPU and runs there at once, ahead of the writer, even when another
 * CPU is idle. Node's main thread does not sleep after the write: it goes on with the call. So the
 * command's start (the exec of its shell, in a sandbox behind bubblewrap) and the rest of the call (judging
 * the sandbox's launch while the command's shell starts early, its supervision) took turns on one CPU.
 * Written from a pool thread, which does sleep right after, the shell wakes on that thread's CPU and both go
 * on side by side: a sandboxed `echo` took 6.9 instead of 7.7 ms (docs/PERFORMANCE.md, "A shell woken on
 * the server's CPU").
 *
 * Writes keep their order (each waits for the one before). What the pool cannot write at once (a full pipe,
 * an error) goes through the stream, as before.
 */
export class HandOver {
  private last: Promise<void> = Promise.resolve();
  /** Writes handed over and not yet done. */
  private queued = 0;
  /** Settles when the write in the pool now is done; undefined while none is. */
  private inPool: Promise<void> | undefined;

  constructor(
    private readonly stdin: Writable,
    /**
     * Whether to write from the pool at all: only where this process has work to do while the child starts
     * (a sandbox's launch to judge). Otherwise the pool's round trip and the wake-up of an idle CPU cost more
     * than they give: an unsandboxed `echo` took 0.1 to 0.2 ms longer.
     */
    private readonly fromPool = true,
  ) {
    if (fromPool) this.holdOpenWhileWriting();
  }

  /**
   * The pool writes to the descriptor's number. Node closes the stream when the child exits (or is
   * killed), and a file opened after that may get the same number: a write still queued in the pool would
   * then go into that file. So the stream's descriptor is closed only once no write of the pool is pending
   * (`_destroy` is where a stream closes what it holds; the stream is marked destroyed at once all the same).
   */
  private holdOpenWhileWriting(): void {
    const stream = this.stdin as Writable & {
      _destroy(error: Error | null, callback: (error?: Error | null) => void): void;
    };
    const destroy = stream._destroy.bind(stream);
    stream._destroy = (error, callback) => {
      if (this.inPool === undefined) destroy(error, callback);
      else void this.inPool.then(() => destroy(error, callback));
    };
  }

  /**
   * Writes `text` after everything handed over before; with `end`, closes the input after it. With nothing
   * before it, the write starts now, not on a later turn of the event loop (the shell it wakes starts while
   * this process goes on with the call).
   */
  write(text: string, end = false): void {
    const run = () =>
      this.send(text, end).then(() => {
        this.queued -= 1;
      });
    this.queued += 1;
    this.last = this.queued === 1 ? run() : this.last.then(run);
  }

  private send(text: string, end: boolean): Promise<void> {
    const { stdin } = this;
    const fd = (stdin as unknown as { _handle?: { fd?: number } })._handle?.fd;
    const bytes = Buffer.from(text);
    const rest = (from: number) => {
      const left = bytes.subarray(from);
      if (end) stdin.end(left);
      else if (left.length > 0) stdin.write(left);
    };
    if (stdin.destroyed) return Promise.resolve();
    if (!this.fromPool || bytes.length === 0 || fd === undefined || fd < 0 || stdin.writableLength > 0) {
      rest(0);
      return Promise.resolve();
    }
    this.inPool = new Promise((resolve) => {
      write(fd, bytes, 0, bytes.length, null, (error, written) => {
        this.inPool = undefined;
        // EAGAIN (the pipe is full) and short writes leave the rest to the stream, which waits for room;
        // another error (the shell is gone) reaches the stream's own error handling the same way.
        if (error) log.debug("a waiting shell's input was not written from the pool", error);
        if (!stdin.destroyed) rest(error ? 0 : written);
        resolve();
      });
    });
    return this.inPool;
  }
}
