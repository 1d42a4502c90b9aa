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
   * cancelled while queued then runs at once, and runTool answers that it was cancelled. `work` gets its
   * place in the order, which it may leave while it waits for a person's answer and take again after.
   */
  run<T>(call: ToolCall, signal: AbortSignal, work: (place: Place) => Promise<T>): Promise<T> {
    const exclusive = !concurrencySafe(call, this.ctx);
    let settle = noop;
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let hold = this.take(exclusive, done);
    const place: Place = {
      leave: () => hold.leave(),
      rejoin: (rejoinSignal) => {
        hold.leave();
        hold = this.take(exclusive, done);
        return untilSettledOrAborted(hold.before, rejoinSignal);
      },
    };
    const turn = untilSettledOrAborted(hold.before, signal).then(() => work(place));
    turn.then(settle, settle);
    return turn;
  }

  /**
   * A place at the end of the order: what it must wait for, and how to leave it. Those after it wait until
   * it is done or has left, and in either case until those before it are done.
   */
  private take(exclusive: boolean, done: Promise<void>): { before: Promise<unknown>; leave: () => void } {
    const before = exclusive ? Promise.all([this.lastExclusive, ...this.sharedSince]) : this.lastExclusive;
    let leave = noop;
    const left = new Promise<void>((resolve) => {
      leave = resolve;
    });
    const finished = Promise.race([Promise.all([before, done]), Promise.all([before, left])]).then(
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
    return { before, leave };
  }
}

/** A call's place in an ArrivalOrder. */
export interface Place {
  /** Lets the calls after this one go before it finishes (it waits for someone's answer). */
  leave(): void;
  /**
   * Takes a place again at the end of the order, as a call arriving now: resolves once the calls it must
   * then follow have finished (or left), or `signal` aborts. Calls arriving later wait for it again.
   */
  rejoin(signal: AbortSignal): Promise<void>;
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
