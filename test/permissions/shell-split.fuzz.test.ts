/**
 * Differential fuzzing of the bash splitter against real bash (see fuzz/oracle.ts). CI runs a fixed seed
 * for its first FUZZ_LINES lines (default 5000, at most FUZZ_SECONDS, default 60); `FUZZ_SECONDS=600 FUZZ_SEED=7 npx vitest run test/permissions/shell-split.fuzz`
 * is a long run. A failure prints each offending line, shrunk, with what bash did that the split hides.
 */
import { describe, expect, it } from "vitest";
import { splitBash } from "../../src/permissions/shell-split.js";
import { tempDir } from "../helpers/context.js";
import { Grammar, Random } from "./fuzz/grammar.js";
import { BashOracle, unexplained } from "./fuzz/oracle.js";

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
/**
 * Lines generated at most. CI runs a fixed prefix of the seeded sequence (the same lines on every machine and
 * under any load, so a green run stays green); FUZZ_SECONDS alone (no FUZZ_LINES) runs until the time is up.
 */
const LINES = Number(process.env.FUZZ_LINES ?? (process.env.FUZZ_SECONDS ? Number.POSITIVE_INFINITY : 5_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20260901);
/** Offending lines collected before the run stops (each is shrunk, which costs bash runs). */
const MAX_FINDINGS = 5;
/** Bash runs spent shrinking one finding. */
const SHRINK_RUNS = 300;

/** Drops characters while the line still fails, so a finding reads as the construct that caused it. */
function shrink(line: string, fails: (line: string) => boolean): string {
  let best = line;
  let runs = 0;
  for (let chunk = Math.max(1, best.length >> 1); chunk >= 1; chunk >>= 1) {
    for (let at = 0; at + chunk <= best.length && runs < SHRINK_RUNS; runs++) {
      const candidate = best.slice(0, at) + best.slice(at + chunk);
      if (fails(candidate)) best = candidate;
      else at += chunk;
    }
  }
  return best;
}

describe("splitBash against real bash", () => {
  it(
    `reports every command bash runs on lines it accepts (seed ${SEED}, ${LINES} lines, at most ${SECONDS}s)`,
    () => {
      const oracle = new BashOracle(tempDir("cc-tools-fuzz-"));
      const grammar = new Grammar(new Random(SEED));
      const check = (line: string) => unexplained(splitBash(line), oracle.run(line));
      const deadline = Date.now() + SECONDS * 1000;
      const findings: string[] = [];
      let lines = 0;
      let accepted = 0;
      let executions = 0;
      while (Date.now() < deadline && lines < LINES && findings.length < MAX_FINDINGS) {
        const line = grammar.line();
        const split = splitBash(line);
        lines++;
        if (!split.ok) continue;
        accepted++;
        const run = oracle.run(line);
        executions += run.executed.length;
        const why = unexplained(split, run);
        if (why === undefined) continue;
        const small = shrink(line, (candidate) => check(candidate) !== undefined);
        findings.push(
          `${JSON.stringify(line)}: ${why}\n    shrunk: ${JSON.stringify(small)}: ${check(small)}`,
        );
      }
      console.log(
        `bash splitter fuzz: seed ${SEED}, ${lines} lines, ${accepted} accepted and run in bash, ${executions} stub runs, ${findings.length} findings`,
      );
      expect(findings, findings.join("\n")).toEqual([]);
      expect(accepted).toBeGreaterThan(0);
    },
    // Each shrink run is bounded by the oracle's own timeout.
    SECONDS * 1000 + MAX_FINDINGS * SHRINK_RUNS * 4000,
  );
});
