import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";
import { runTool } from "../../src/executor/run.js";
import {
  afterCalls,
  COLLECT_AFTER_GROWTH_BYTES,
  COLLECT_AFTER_RSS_GROWTH_BYTES,
  COLLECT_QUIET_MS,
  callEnded,
  callStarted,
  collectionsRun,
  enableIdleCollection,
  GC_READS_OPTIONS,
  MAX_REWRITE_BYTES,
  obtainGc,
} from "../../src/process/memory.js";
import { testContext } from "../helpers/context.js";
import { eventually } from "./ps.js";

/** How long a fresh process may take before its test fails instead of waiting on it. */
const FRESH_PROCESS_TIMEOUT_MS = 60_000;

/** Runs `body` in a fresh process with the memory module imported (as `memory`); returns its JSON output. */
function inFreshProcess(body: string): unknown {
  const memory = new URL("../../src/process/memory.ts", import.meta.url).href;
  const script = `
    const memory = await import(${JSON.stringify(memory)});
    const { getHeapSpaceStatistics } = await import("node:v8");
    const { spawnSync } = await import("node:child_process");
    const { readFileSync } = await import("node:fs");
    const youngBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
    const minorFaults = () => Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")[7]);
    ${body}`;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: FRESH_PROCESS_TIMEOUT_MS,
  });
  return JSON.parse(out);
}

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

  it("collects when the process grew though its heap did not grow by the threshold", () => {
    // A call's 10 MB buffer, filled (resident) and kept: heap plus external memory grows by less than
    // COLLECT_AFTER_GROWTH_BYTES, the process's RSS by more than COLLECT_AFTER_RSS_GROWTH_BYTES.
    const [afterGrowth, afterQuiet] = inFreshProcess(`
      memory.enableIdleCollection();
      const quiet = () => new Promise((resolve) => setTimeout(resolve, 8 * memory.COLLECT_QUIET_MS));
      // A first quiet moment: growth counts from the lowest RSS seen, and loading the modules may leave
      // the process shrinking for a moment after it.
      memory.callStarted();
      memory.callEnded();
      await quiet();
      memory.callStarted();
      const held = Buffer.alloc(10 * 1024 * 1024, 1);
      memory.callEnded();
      await quiet();
      const afterGrowth = memory.collectionsRun();
      memory.callStarted();
      memory.callEnded();
      await quiet();
      console.log(JSON.stringify([afterGrowth, memory.collectionsRun(), held.length]));`) as number[];
    expect(10 * 1024 * 1024).toBeLessThan(COLLECT_AFTER_GROWTH_BYTES);
    expect(10 * 1024 * 1024).toBeGreaterThan(COLLECT_AFTER_RSS_GROWTH_BYTES);
    expect(afterGrowth).toBe(1);
    // Nothing grew since: the next quiet moment does not collect again.
    expect(afterQuiet).toBe(1);
  });

  it("collects once the host has loaded, whatever it grew, and not again until it grows", () => {
    const [afterLoad, afterQuiet] = inFreshProcess(`
      memory.enableIdleCollection();
      const quiet = () => new Promise((resolve) => setTimeout(resolve, 8 * memory.COLLECT_QUIET_MS));
      memory.hostLoaded();
      await quiet();
      const afterLoad = memory.collectionsRun();
      memory.callStarted();
      memory.callEnded();
      await quiet();
      console.log(JSON.stringify([afterLoad, memory.collectionsRun()]));`) as number[];
    expect(afterLoad).toBe(1);
    expect(afterQuiet).toBe(1);
  });

  it("collects nothing when a host loaded without turning idle collection on", () => {
    const collections = inFreshProcess(`
      memory.hostLoaded();
      await new Promise((resolve) => setTimeout(resolve, 8 * memory.COLLECT_QUIET_MS));
      console.log(JSON.stringify(memory.collectionsRun()));`);
    expect(collections).toBe(0);
  });

  it("is a full collection on every Node line", () => {
    // Node reports each collection's kind; 4 is a major (mark-compact) one, 1 a minor one.
    const kinds = inFreshProcess(`
      const { PerformanceObserver } = await import("node:perf_hooks");
      const kinds = [];
      const observer = new PerformanceObserver((list) => kinds.push(...list.getEntries().map((e) => e.detail.kind)));
      observer.observe({ entryTypes: ["gc"] });
      memory.collectNow();
      await new Promise((resolve) => setTimeout(resolve, 100));
      console.log(JSON.stringify(kinds));`) as number[];
    expect(kinds).toContain(4);
  });

  it.runIf(GC_READS_OPTIONS)("gives the pages of what it collected back to the system", () => {
    // About 40 MB of objects that were a call's, garbage now. V8 may have collected them on its own
    // meanwhile; either way their pages are still the process's until a collection gives them back.
    const [held, after] = inFreshProcess(`
      let made = [];
      for (let i = 0; i < 6e5; i++) made.push({ i, text: "line " + i });
      made = undefined;
      const held = process.memoryUsage().rss;
      memory.collectNow();
      console.log(JSON.stringify([held, process.memoryUsage().rss]));`) as number[];
    // A regular collection frees the objects but keeps their pages pooled for later: RSS stays.
    expect(held! - after!).toBeGreaterThan(COLLECT_AFTER_GROWTH_BYTES);
  });
});

describe("the young generation of a long-running host", () => {
  /** New space after bursts of short-lived allocation, in a fresh process, with or without the host's setting. */
  function youngGenerationBytes(enable: boolean): number {
    const memory = new URL("../../src/process/memory.ts", import.meta.url).href;
    const script = `
      const { enableIdleCollection } = await import(${JSON.stringify(memory)});
      if (${enable}) enableIdleCollection();
      const { getHeapSpaceStatistics } = await import("node:v8");
      for (let round = 0; round < 3; round++) { const kept = []; for (let i = 0; i < 2e5; i++) kept.push({ i }); }
      console.log(getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size);`;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    return Number(out.trim());
  }

  it("stays at its starting size instead of growing with every burst", () => {
    const grown = youngGenerationBytes(false);
    const kept = youngGenerationBytes(true);
    expect(kept).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(grown).toBeGreaterThan(kept);
  });
});

describe("the young generation after a fork", () => {
  it("is left alone in a process whose host did not turn idle collection on", () => {
    expect(inFreshProcess("console.log(JSON.stringify(memory.rewriteYoungGeneration()));")).toBe(0);
  });

  it("is rewritten whole once, without growing", () => {
    const [before, written, after, rewrites] = inFreshProcess(`
      memory.enableIdleCollection();
      const before = youngBytes();
      const written = memory.rewriteYoungGeneration();
      console.log(JSON.stringify([before, written, youngBytes(), memory.youngGenerationRewrites()]));`) as number[];
    expect(before).toBeLessThanOrEqual(MAX_REWRITE_BYTES);
    expect(written).toBeGreaterThanOrEqual(before!);
    expect(after).toBe(before);
    expect(rewrites).toBe(1);
  });

  it("is rewritten at the first quiet moment after a spawn, never while a call runs", () => {
    const [during, after] = inFreshProcess(`
      memory.enableIdleCollection();
      const { spawn } = await import("node:child_process");
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      memory.callStarted();
      await new Promise((resolve) => spawn("true").on("exit", resolve));
      await sleep(4 * memory.COLLECT_QUIET_MS);
      const during = memory.youngGenerationRewrites();
      memory.callEnded();
      for (let waited = 0; memory.youngGenerationRewrites() === during && waited < 5000; waited += 10) await sleep(10);
      console.log(JSON.stringify([during, memory.youngGenerationRewrites()]));`) as number[];
    expect(during).toBe(0);
    expect(after).toBe(1);
  });

  it.runIf(process.platform === "linux")(
    "takes the copy-on-write faults of the fork itself, so the next allocation does not",
    () => {
      // Rounds of: fork (spawn a program), rewrite or not, then allocate as much as the young generation
      // holds, counting the minor faults of that allocation alone (median of each kind; the first pair
      // warms up). Without a fork, the allocation takes none.
      const [plain, rewritten] = inFreshProcess(`
        memory.enableIdleCollection();
        const ballast = Array.from({ length: 100000 }, (_, i) => ({ i }));
        let sink;
        const allocate = () => { for (let done = 0; done < youngBytes(); done += 512) sink = new Array(64).fill(done); };
        const faults = [[], []];
        for (let round = 0; round < 24; round++) {
          const rewrite = round % 2 === 1;
          spawnSync("true");
          if (rewrite) memory.rewriteYoungGeneration();
          const before = minorFaults();
          allocate();
          if (round >= 2) faults[rewrite ? 1 : 0].push(minorFaults() - before);
        }
        const median = (list) => list.sort((a, b) => a - b)[list.length >> 1];
        console.log(JSON.stringify([median(faults[0]), median(faults[1]), ballast.length, typeof sink]));`) as number[];
      expect(plain).toBeGreaterThan(0);
      expect(rewritten).toBeLessThan(plain! / 2);
    },
  );
});

describe("idle collection in the executor", () => {
  it("counts every runTool call, so any host that turned collection on gets it after a large call", async () => {
    enableIdleCollection();
    let duringCall = -1;
    // The call's data stays reachable until the end: garbage could be collected by V8 on its own before
    // the quiet moment, and there would be no growth left to collect.
    const data: Buffer[] = [];
    const large = defineTool({
      name: "Large",
      description: "Allocates a lot and holds it until it answers.",
      permissionLevel: "readOnly",
      inputSchema: z.strictObject({}),
      async execute() {
        // Four times the threshold: the test above left twice the threshold of data behind, which V8 may
        // free while this call allocates, so that heap plus external memory grows by only the difference.
        for (let size = 0; size <= 4 * COLLECT_AFTER_GROWTH_BYTES; size += 1 << 20)
          data.push(Buffer.alloc(1 << 20, 1));
        const before = collectionsRun();
        await new Promise((resolve) => setTimeout(resolve, 4 * COLLECT_QUIET_MS));
        duringCall = collectionsRun() - before;
        return ToolResult.success(`held ${data.length} MB`);
      },
    });
    const ctx = testContext({ tools: [large] });
    const before = collectionsRun();
    const result = await runTool("Large", {}, ctx);
    expect(result.isError).toBe(false);
    expect(duringCall).toBe(0);
    expect(await eventually(() => collectionsRun() > before, 2_000)).toBe(true);
    expect(data.length).toBeGreaterThan(16);
  });
});

describe("work left for after the calls", () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it("runs once the last call running has ended, after the turn in which it ended", async () => {
    const order: string[] = [];
    callStarted();
    callStarted();
    afterCalls(() => order.push("task"));
    await nextTurn();
    callEnded();
    await nextTurn();
    // One call still runs.
    expect(order).toEqual([]);
    callEnded();
    order.push("answer written");
    await nextTurn();
    expect(order).toEqual(["answer written", "task"]);
  });

  it("runs at the next turn when no call runs, and waits for a call that started before that turn", async () => {
    const order: string[] = [];
    afterCalls(() => order.push("idle"));
    await nextTurn();
    expect(order).toEqual(["idle"]);
    afterCalls(() => order.push("after the call"));
    callStarted();
    await nextTurn();
    await nextTurn();
    expect(order).toEqual(["idle"]);
    callEnded();
    await nextTurn();
    expect(order).toEqual(["idle", "after the call"]);
  });

  it("runs each task once, and the next despite one that threw", async () => {
    let runs = 0;
    afterCalls(() => {
      throw new Error("a task that fails");
    });
    const task = () => runs++;
    afterCalls(task);
    afterCalls(task);
    await nextTurn();
    await nextTurn();
    expect(runs).toBe(1);
  });
});
