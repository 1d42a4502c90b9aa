import { describe, expect, it } from "vitest";
import {
  COLLECT_AFTER_GROWTH_BYTES,
  COLLECT_QUIET_MS,
  callEnded,
  callStarted,
  collectionsRun,
  enableIdleCollection,
  obtainGc,
} from "../../src/process/memory.js";
import { eventually } from "./ps.js";

describe("collecting garbage after large calls", () => {
  it("gets V8's gc() without --expose-gc on the command line", () => {
    expect(typeof obtainGc()).toBe("function");
  });

  it("collects after a large call once the process is quiet, never while a call runs", async () => {
    enableIdleCollection();
    const before = collectionsRun();
    callStarted();
    // A large call's data (twice the threshold, so garbage V8 collects on its own meanwhile cannot hide
    // the growth), reachable throughout.
    const data: Buffer[] = [];
    for (let size = 0; size <= 2 * COLLECT_AFTER_GROWTH_BYTES; size += 1 << 20)
      data.push(Buffer.alloc(1 << 20, 1));
    // A second call ends while the first still runs: nothing is collected until both ended.
    callStarted();
    callEnded();
    await new Promise((resolve) => setTimeout(resolve, 4 * COLLECT_QUIET_MS));
    expect(collectionsRun()).toBe(before);
    callEnded();
    expect(await eventually(() => collectionsRun() === before + 1, 10_000)).toBe(true);
    expect(data.length).toBeGreaterThan(16);
    // A quiet process that did not grow again is not collected again.
    callStarted();
    callEnded();
    await new Promise((resolve) => setTimeout(resolve, 4 * COLLECT_QUIET_MS));
    expect(collectionsRun()).toBe(before + 1);
  });
});
