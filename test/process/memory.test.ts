import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";
import { runTool } from "../../src/executor/run.js";
import {
  COLLECT_AFTER_GROWTH_BYTES,
  COLLECT_QUIET_MS,
  callEnded,
  callStarted,
  collectionsRun,
  enableIdleCollection,
  obtainGc,
} from "../../src/process/memory.js";
import { testContext } from "../helpers/context.js";
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

describe("idle collection in the executor", () => {
  it("counts every runTool call, so any host that turned collection on gets it after a large call", async () => {
    enableIdleCollection();
    let duringCall = -1;
    const large = defineTool({
      name: "Large",
      description: "Allocates a lot and holds it until it answers.",
      permissionLevel: "readOnly",
      inputSchema: z.strictObject({}),
      async execute() {
        const data: Buffer[] = [];
        for (let size = 0; size <= 2 * COLLECT_AFTER_GROWTH_BYTES; size += 1 << 20)
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
  });
});
