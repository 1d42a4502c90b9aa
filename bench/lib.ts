import { performance } from "node:perf_hooks";

/** One line of `npm run bench`: our time against a baseline's, measured in the same run. */
export interface BenchRow {
  name: string;
  baseline: string;
  oursMs: number;
  baselineMs: number;
  /** Largest acceptable ours/baseline ratio. */
  targetRatio?: number;
  /** Largest acceptable absolute time for ours, where the issue sets one. */
  targetMs?: number;
  note?: string;
}

export type Report = (row: BenchRow) => void;

/** A benchmark module: bench/<area>.ts default-exports one of these. */
export type Bench = (report: Report) => Promise<void>;

/**
 * Median wall time of `fn` over `runs` runs after `warmup` unmeasured ones. Medians, not means: the
 * machines are shared, and one slow outlier says nothing about the code.
 */
export async function timeMedian(
  fn: () => Promise<unknown> | unknown,
  runs = 15,
  warmup = 3,
): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/**
 * Alternates ours and the baseline run by run, so drift in machine load hits both alike.
 * Returns both medians.
 */
export async function timePair(
  ours: () => Promise<unknown> | unknown,
  baseline: () => Promise<unknown> | unknown,
  runs = 15,
  warmup = 3,
): Promise<{ oursMs: number; baselineMs: number }> {
  for (let i = 0; i < warmup; i++) {
    await ours();
    await baseline();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    let start = performance.now();
    await ours();
    a.push(performance.now() - start);
    start = performance.now();
    await baseline();
    b.push(performance.now() - start);
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return { oursMs: median(a), baselineMs: median(b) };
}
