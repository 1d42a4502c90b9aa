import { describe, expect, it } from "vitest";
import {
  COLLECT_AFTER_GROWTH_BYTES,
  COLLECT_QUIET_MS,
  callEnded,
  callStarted,
  enableIdleCollection,
  obtainGc,
} from "../../src/process/memory.js";

/** Kept reachable: a registry that is itself garbage never calls back. */
const registries: FinalizationRegistry<string>[] = [];

/** Resolves true once what `register` registered was garbage-collected, false after `ms`. */
function collected(register: (registry: FinalizationRegistry<string>) => void, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const registry = new FinalizationRegistry<string>(() => resolve(true));
    registries.push(registry);
    register(registry);
    setTimeout(() => resolve(false), ms);
  });
}

describe("collecting garbage after large calls", () => {
  it("gets V8's gc() without --expose-gc on the command line", () => {
    expect(typeof obtainGc()).toBe("function");
  });

  it("collects a large call's garbage once the process is quiet, not while a call runs", async () => {
    enableIdleCollection();
    callStarted();
    const done = collected(
      (registry) => {
        // Garbage of a large call: more than the threshold, unreachable once the call ends.
        let garbage: Buffer[] | undefined = [];
        for (let size = 0; size <= COLLECT_AFTER_GROWTH_BYTES; size += 1 << 20)
          garbage.push(Buffer.alloc(1 << 20, 1));
        const marker = {};
        registry.register(marker, "marker");
        garbage = undefined;
      },
      20 * COLLECT_QUIET_MS + 2000,
    );
    // A second call keeps the process busy: nothing is collected until both ended.
    callStarted();
    callEnded();
    await new Promise((resolve) => setTimeout(resolve, 3 * COLLECT_QUIET_MS));
    callEnded();
    expect(await done).toBe(true);
  });
});
