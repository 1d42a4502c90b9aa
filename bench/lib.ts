import { spawn } from "node:child_process";
import { closeSync, fsyncSync, openSync } from "node:fs";
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
  /** An installed peer doing the same work in the same run (an MCP server a user could pick instead). */
  peer?: string;
  peerMs?: number;
  /** Largest acceptable ours/peer ratio. */
  targetPeerRatio?: number;
  /** Files in the tree searched, for the scale rows' cost per 1k files. */
  files?: number;
  /** Peak RSS of our server's process tree during this series, and of the peer's, in MB. */
  peakRssMb?: number;
  peerPeakRssMb?: number;
}

/** Resident memory of a server, ours against the peer's, in MB. */
export interface MemoryRow {
  name: string;
  oursMb: number;
  peer?: string;
  peerMb?: number;
  targetMb?: number;
}

export type Report = (row: BenchRow) => void;

export interface BenchOptions {
  /** A fast pass: fewer runs, no 50k-file tree. */
  quick: boolean;
  /** The user's own tree for the corpus rows (`--tree DIR`) instead of the one built from node_modules. */
  tree?: string;
  memory: (row: MemoryRow) => void;
  /** A line for the report's header: corpus sizes, versions. */
  info: (line: string) => void;
}

/** A benchmark module: bench/<area>.ts default-exports one of these. */
export type Bench = (report: Report, options: BenchOptions) => Promise<void>;

/**
 * The pause before each call of the MCP series, untimed, for every contestant alike. A model's calls come
 * seconds apart, and a server that keeps a shell waiting for the next command (src/process/prestart.ts)
 * starts it in that pause; without one, the rotation of the rounds would put two of our calls back to back
 * in every other round, and those would measure the batch case instead (which `bench/peers.ts` times in
 * a row of its own). It also keeps the 2 cores' contention between servers out of each other's rows.
 */
export const CALL_PAUSE_MS = 50;

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/** Waits `ms` (untimed, between calls); nothing when 0. */
async function pause(ms: number): Promise<void> {
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a contestant resolves to when it times only part of its work (after an untimed first step). */
export interface OwnTiming {
  ownMs: number;
}

function ownTiming(value: unknown): number | undefined {
  const ms = (value as Partial<OwnTiming> | null | undefined)?.ownMs;
  return typeof ms === "number" ? ms : undefined;
}

/**
 * `work` timed alone, then the file it wrote flushed to disk, untimed. `sed -i` and a peer that does not
 * sync leave their new file's pages for the kernel to write back (ext4 starts that at once when a rename
 * replaces a file); the next contestant that syncs (cc-tools' Edit) then waits for those pages too, as an
 * ext4 journal commit writes the data of every file in it first. Flushing after each call leaves every
 * contestant the disk as it found it, and charges nobody another's writes.
 */
export function flushedAfter(work: () => Promise<unknown> | unknown, path: string): () => Promise<OwnTiming> {
  return async () => {
    const start = performance.now();
    await work();
    const ownMs = performance.now() - start;
    const fd = openSync(path, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { ownMs };
  };
}

/**
 * Runs every contestant once per round, in turn, so drift in machine load hits all alike; returns each
 * one's median. A contestant that is undefined (a peer not installed) is skipped; one that resolves to an
 * OwnTiming is timed by that.
 */
export async function timeInterleaved<K extends string>(
  contestants: Partial<Record<K, (() => Promise<unknown> | unknown) | undefined>>,
  runs = 15,
  warmup = 3,
  /** A pause before each call, not timed: the time a model takes between calls, with the machine quiet. */
  pauseMs = 0,
): Promise<Record<K, number>> {
  const entries = Object.entries(contestants).filter(([, fn]) => fn !== undefined) as Array<
    [K, () => Promise<unknown> | unknown]
  >;
  const samples = new Map<K, number[]>(entries.map(([k]) => [k, []]));
  for (let i = 0; i < warmup + runs; i++) {
    // Each round starts with the next contestant: going first after another program ran costs the
    // first one a few ms (a server whose code is identical measured 5 to 7 ms slower when always first).
    const round = [...entries.slice(i % entries.length), ...entries.slice(0, i % entries.length)];
    for (const [key, fn] of round) {
      await pause(pauseMs);
      const start = performance.now();
      const value = await fn();
      if (i >= warmup) samples.get(key)!.push(ownTiming(value) ?? performance.now() - start);
    }
  }
  const out = {} as Record<K, number>;
  for (const [key, xs] of samples) out[key] = median(xs);
  return out;
}

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
  /** A pause before each call, not timed: the time a model takes between calls. */
  pauseMs = 0,
): Promise<{ oursMs: number; baselineMs: number }> {
  const { ours: oursMs, baseline: baselineMs } = await timeInterleaved(
    { ours, baseline },
    runs,
    warmup,
    pauseMs,
  );
  return { oursMs, baselineMs };
}

/**
 * Runs a command as a shell would with nothing on stdin (rg with no path and a pipe on stdin would search
 * stdin), collecting its output as a caller would. Resolves with the output size; exit codes 0 and 1 (rg's
 * "nothing matched") count as success.
 */
export function runCommand(
  command: string,
  args: string[],
  cwd?: string,
  env?: NodeJS.ProcessEnv,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ["ignore", "pipe", "ignore"],
      ...(env ? { env: { ...process.env, ...env } } : {}),
    });
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 || code === 1 ? resolve(bytes) : reject(new Error(`${command} exited with ${code}`)),
    );
  });
}
