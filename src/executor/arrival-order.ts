import type { ToolContext } from "../core/context.js";
import { concurrencySafe, type ToolCall } from "./batch.js";

/**
 * Runs calls that arrive one by one (an MCP connection's tools/call requests) with the same rule as
 * runToolBatch: a concurrency-safe call (a read, a search) may overlap other such calls, but waits for every
 * call that changes things and arrived before it; a call that changes things waits for everything that
 * arrived before it. So a client that pipelines Read then Edit gets them in that order, and reads still
 * run in parallel.
 */
export class ArrivalOrder {
  /** Settles when the last exclusive call (and everything before it) has finished. */
  private lastExclusive: Promise<void> = Promise.resolve();
  /** Shared calls that arrived since the last exclusive one. */
  private sharedSince: Promise<void>[] = [];

  constructor(private readonly ctx: ToolContext) {}

  /**
   * Runs `work` once the calls it must follow have finished. `signal` ends the wait early: a call
   * cancelled while queued then runs at once, and runTool answers that it was cancelled. `work` may call
   * `leave` to let the calls after it go before it finishes (it waits for someone's answer).
   */
  run<T>(call: ToolCall, signal: AbortSignal, work: (leave: () => void) => Promise<T>): Promise<T> {
    const exclusive = !concurrencySafe(call, this.ctx);
    const before = exclusive ? Promise.all([this.lastExclusive, ...this.sharedSince]) : this.lastExclusive;
    let leave = noop;
    const left = new Promise<void>((resolve) => {
      leave = resolve;
    });
    const turn = untilSettledOrAborted(before, signal).then(() => work(leave));
    // A call cancelled while queued, or one that left, ends early for those after it, but they still wait
    // for those before it.
    const finished = Promise.race([Promise.all([before, turn]), Promise.all([before, left])]).then(
      noop,
      noop,
    );
    if (exclusive) {
      this.lastExclusive = finished;
      this.sharedSince = [];
    } else {
      this.sharedSince.push(finished);
      void finished.then(() => {
        this.sharedSince = this.sharedSince.filter((p) => p !== finished);
      });
    }
    return turn;
  }
}

function noop(): void {}

function untilSettledOrAborted(wait: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    wait.then(done, done);
  });
}
