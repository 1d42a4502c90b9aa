import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** How long a fresh process may take before its test fails instead of waiting on it. */
const FRESH_PROCESS_TIMEOUT_MS = 60_000;

/**
 * Runs `body` in a fresh node (started with `nodeFlags`) with the compilers module imported (as
 * `compilers`) and `tag()` for V8's cached-data version tag, which hashes every flag set away from its
 * default; returns its stdout.
 */
function inFreshProcess(body: string, nodeFlags: string[] = []): string {
  const compilers = new URL("../../src/process/compilers.ts", import.meta.url).href;
  const script = `
    const compilers = await import(${JSON.stringify(compilers)});
    const { cachedDataVersionTag: tag } = await import("node:v8");
    ${body}`;
  const run = spawnSync(
    process.execPath,
    [...nodeFlags, "--import", "tsx", "--input-type=module", "-e", script],
    {
      encoding: "utf8",
      timeout: FRESH_PROCESS_TIMEOUT_MS,
    },
  );
  // V8 prints an error for a flag it does not know: holding and resuming must set none.
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return run.stdout;
}

/** A function run hot enough for TurboFan, `hot` times `rounds` (its name shows in --trace-opt). */
const HOT_FUNCTION = `
  function hotSum(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }
  const runHot = (rounds) => { let t = 0; for (let r = 0; r < rounds; r++) t += hotSum(100); return t; };`;

describe("holding V8's optimizing compilers while a host loads", () => {
  it("turns TurboFan off, and back on with resume, leaving every other flag as it was", () => {
    const out = JSON.parse(
      inFreshProcess(`
        const start = tag();
        compilers.holdOptimizingCompilers();
        const held = [...compilers.heldCompilers()];
        const whileHeld = tag();
        compilers.holdOptimizingCompilers(); // a second hold changes nothing
        compilers.resumeOptimizingCompilers();
        const resumed = tag();
        compilers.resumeOptimizingCompilers(); // nor does a second resume
        console.log(JSON.stringify({ start, held, whileHeld, resumed, again: tag(), after: compilers.heldCompilers() }));`),
    ) as Record<string, unknown>;
    expect(out.held).toContain("turbofan");
    expect(out.whileHeld).not.toBe(out.start);
    expect(out.resumed).toBe(out.start);
    expect(out.again).toBe(out.start);
    expect(out.after).toEqual([]);
  });

  it("optimizes nothing while held, and optimizes again once resumed", () => {
    const trace = inFreshProcess(
      `${HOT_FUNCTION}
        compilers.holdOptimizingCompilers();
        runHot(200_000);
        console.log("RESUMING");
        compilers.resumeOptimizingCompilers();
        runHot(200_000);
        console.log("DONE");`,
      ["--trace-opt"],
    );
    const [held, resumed] = trace.split("RESUMING");
    expect(held).not.toMatch(/completed (compiling|optimizing) .*hotSum.*(TURBOFAN|MAGLEV)/);
    expect(resumed).toMatch(/completed (compiling|optimizing) .*hotSum.*TURBOFAN/);
  });

  it("holds Maglev too where V8 runs it by default (from V8 13, Node 24)", () => {
    const out = JSON.parse(
      inFreshProcess(`
        const start = tag();
        compilers.holdOptimizingCompilers();
        const held = [...compilers.heldCompilers()];
        compilers.resumeOptimizingCompilers();
        console.log(JSON.stringify({ start, held, resumed: tag() }));`),
    ) as { start: number; held: string[]; resumed: number };
    const maglevRuns = Number(process.versions.v8.split(".")[0]) >= 13;
    expect(out.held).toEqual(maglevRuns ? ["turbofan", "maglev"] : ["turbofan"]);
    expect(out.resumed).toBe(out.start);
  });

  it("leaves a compiler someone turned off off", () => {
    const out = JSON.parse(
      inFreshProcess(
        `${HOT_FUNCTION}
        const start = tag();
        compilers.holdOptimizingCompilers();
        const held = [...compilers.heldCompilers()];
        compilers.resumeOptimizingCompilers();
        console.log(JSON.stringify({ start, held, resumed: tag() }));`,
        ["--no-turbofan"],
      ),
    ) as Record<string, unknown>;
    expect(out.held).not.toContain("turbofan");
    expect(out.resumed).toBe(out.start);
  });
});
