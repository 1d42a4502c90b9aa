import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { log } from "../core/log.js";
import { resumeOptimizingCompilers } from "./compilers.js";
import { beforeFork } from "./forks.js";

/**
 * Giving back the memory a large call leaves behind. A call on a big file (an Edit of 10 MiB) allocates
 * tens of MB that are garbage once it answers; V8 lets old space and external memory grow a long way
 * before it collects, so a server that has just handled large files stays hundreds of MB big for a while.
 * That costs twice: the resident size itself, and latency, since every spawn forks the whole process
 * (see docs/PERFORMANCE.md) and fresh pages for the next large call are slower to get than reused ones.
 *
 * So a long-running host (the MCP server, the agent CLI) turns this on; then, once every call has
 * finished and the process has been quiet for COLLECT_QUIET_MS, a full collection runs if the heap and
 * external memory grew by COLLECT_AFTER_GROWTH_BYTES since the last one, or the process's resident
 * memory by COLLECT_AFTER_RSS_GROWTH_BYTES. It runs after the answer was sent and never while a call is
 * running, so no call waits for it unless one arrives during the pause itself (a few to a few tens of ms). The same quiet moment after a spawn (a fork of this process) also
 * rewrites the young generation, so that the next call does not pay for the fork's copy-on-write
 * (rewriteYoungGeneration). Library users' processes are left alone: nothing happens until a host calls
 * enableIdleCollection().
 */

/** Growth of heap + external memory since the last collection that makes a finished call worth one. */
export const COLLECT_AFTER_GROWTH_BYTES = 16 * 1024 * 1024;
/**
 * Growth of the process's resident memory since the last collection that makes a finished call worth one,
 * though the heap itself did not grow by COLLECT_AFTER_GROWTH_BYTES: V8 collected on its own meanwhile
 * and kept the emptied pages, which only the quiet collection gives back (QUIET_COLLECTION).
 */
export const COLLECT_AFTER_RSS_GROWTH_BYTES = 8 * 1024 * 1024;
/**
 * Quiet time, after the last call finished, before collecting: the answer has been written by then, and
 * a burst of calls shares one collection instead of paying one each.
 */
export const COLLECT_QUIET_MS = 25;

/** V8's gc(), with the options its GC extension reads (see GC_READS_OPTIONS). */
type Collect = (options?: CollectOptions) => void;
interface CollectOptions {
  type: "major" | "minor";
  execution: "sync" | "async";
  flavor: "regular" | "last-resort";
}

/**
 * The collection run when the process is quiet: a full, synchronous one that also gives memory back.
 * V8's "last-resort" flavour is the collection it runs before giving up on an allocation: it repeats the
 * mark-compact until nothing more dies, compacts every fragmented page, and returns the emptied pages to
 * the system at once instead of keeping them pooled for later. A regular collection frees as much but
 * keeps those pages: on Node 22 and 24 the server stayed 10 to 12 MB larger after a regular collection
 * than after this one (docs/PERFORMANCE.md, "Peak RSS"). It takes longer (40 to 60 ms against 16 to
 * 30 ms for the server's heap), which the quiet moment hides. Node 20 runs a regular full collection
 * instead (GC_READS_OPTIONS).
 */
export const QUIET_COLLECTION: CollectOptions = { type: "major", execution: "sync", flavor: "last-resort" };

/**
 * Whether this V8's gc() reads its options (V8 12, Node 22, and later). Node 20's V8 runs a minor
 * collection for any options given, so there gc() is called without them: a regular full collection.
 */
export const GC_READS_OPTIONS = Number(process.versions.v8.split(".")[0]) >= 12;

let enabled = false;
/** The collector, once looked for (null: not available). */
let collect: Collect | null | undefined;
let running = 0;
let timer: NodeJS.Timeout | undefined;
let baseline = 0;
/** Resident memory right after the last collection (or the lowest seen since). */
let rssBaseline = 0;
let collections = 0;

/** How many collections this module has run in this process (for diagnostics and tests). */
export function collectionsRun(): number {
  return collections;
}

/** Heap in use plus memory outside the heap (buffers): what a collection can give back. */
function usedBytes(): number {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/**
 * V8's gc() without --expose-gc on the command line: the flag set at run time, and the function taken from
 * a fresh context (the flag only applies to contexts created after it). Works on Node 20, 22 and 24.
 */
export function obtainGc(): Collect | undefined {
  const existing = (globalThis as { gc?: Collect }).gc;
  if (typeof existing === "function") return existing;
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    return typeof gc === "function" ? (gc as Collect) : undefined;
  } catch (error) {
    log.debug("could not expose the garbage collector; memory is released by V8's own schedule", error);
    return undefined;
  }
}

/**
 * V8 doubles the young generation each time it fills while much is still alive (a burst of module loading,
 * a large call), up to 16 MB per semi-space on Node 20 and 22 and 64 MB on Node 24, and keeps it: a
 * resident cost of two to eight times that, for a server whose calls each allocate a few MB at most.
 * Growth off: the young generation stays at its starting size (1 MB per semi-space), collected more often,
 * each time cheaply (little of a finished call's garbage is alive). Measured on the MCP server over Grep and
 * Glob calls on a 10k-file tree: peak RSS 102 MB → 81 MB, time within the noise (docs/PERFORMANCE.md).
 */
export const YOUNG_GENERATION_FLAG = "--semi-space-growth-factor=1";

/**
 * Turns on collection after large calls for this process, and keeps the young generation small
 * (YOUNG_GENERATION_FLAG). The collector itself is obtained at the first
 * collection, so a process that never handles a large call (or a cold start) pays nothing for it.
 */
export function enableIdleCollection(): void {
  if (enabled) return;
  enabled = true;
  try {
    setFlagsFromString(YOUNG_GENERATION_FLAG);
  } catch (error) {
    log.debug("could not keep the young generation small", error);
  }
  baseline = usedBytes();
  rssBaseline = process.memoryUsage.rss();
}

/** The host loaded since the last quiet moment: the next one collects, whatever the growth. */
let loaded = false;

/**
 * A long-running host has loaded what it serves with (the MCP server answers calls from now on): the
 * garbage of loading (module evaluation, the tools' schemas built and converted) is collected at the first
 * quiet moment, so that a server that then waits for its client waits at the size it needs. Measured on
 * Node 24: 6 MB less resident after the collection (docs/PERFORMANCE.md, "Idle RSS"). The optimizing
 * compilers held off while it loaded (src/process/compilers.ts) come back with its first call.
 */
export function hostLoaded(): void {
  if (!enabled) return;
  loaded = true;
  whenQuiet();
}

/** True when this process forked (spawned) since its young generation was last rewritten. */
let forked = false;

// After a fork, the next quiet moment rewrites the young generation (see rewriteYoungGeneration).
beforeFork(() => {
  if (!enabled) return;
  forked = true;
  whenQuiet();
});

/** How many calls of this process are running now. */
export function callsRunning(): number {
  return running;
}

/** Marks the start of a call: no collection runs until every started call has ended. */
export function callStarted(): void {
  // What runs from now on is what the host is for: V8 may optimize it again.
  resumeOptimizingCompilers();
  running++;
  if (timer) {
    clearTimeout(timer);
    timer = undefined;
  }
}

/** Marks the end of a call; when the process is then quiet, what the call left behind is tidied (quietWork). */
export function callEnded(): void {
  running = Math.max(0, running - 1);
  if (running === 0) scheduleAfterCalls();
  if (enabled) whenQuiet();
}

/** Work left by calls for the moment none runs (afterCalls). */
const afterCallTasks = new Set<() => void>();
let afterCallsScheduled = false;

/**
 * Runs `task` once no call is running: right after the last call running now has ended and its answer
 * has gone out, or at the next turn of the event loop when no call runs. For work a call leaves for later
 * that should be done before the next call comes (the hash of what it wrote). Hosts write a call's answer
 * in the same turn of the event loop as the call ends, and an immediate runs after that turn, so the
 * answer never waits for the task; a fixed delay instead could fall just when the next call arrives
 * (a hash of 10 MiB, 11 ms, landed in the next Edit of the bench's series, 50 ms apart). In every host,
 * whether or not it turned on idle collection: every call counts (runTool).
 */
export function afterCalls(task: () => void): void {
  afterCallTasks.add(task);
  if (running === 0) scheduleAfterCalls();
}

function scheduleAfterCalls(): void {
  if (afterCallsScheduled || afterCallTasks.size === 0) return;
  afterCallsScheduled = true;
  setImmediate(runAfterCalls).unref();
}

function runAfterCalls(): void {
  afterCallsScheduled = false;
  // A call started in the same turn: its end schedules the tasks again.
  if (running > 0) return;
  const tasks = [...afterCallTasks];
  afterCallTasks.clear();
  for (const task of tasks) {
    try {
      task();
    } catch (error) {
      log.error("work left for after the calls failed", error);
    }
  }
}

/** Runs quietWork once no call has run for COLLECT_QUIET_MS (at the end of the last call running now). */
function whenQuiet(): void {
  if (running > 0 || timer) return;
  timer = setTimeout(quietWork, COLLECT_QUIET_MS);
  timer.unref();
}

/** What a quiet moment is for: a collection if the process grew, and a rewrite if it forked. */
function quietWork(): void {
  timer = undefined;
  if (running > 0) return;
  if (loaded) {
    loaded = false;
    collectNow();
  } else collectIfGrown();
  if (forked) rewriteYoungGeneration();
}

function collectIfGrown(): void {
  const used = usedBytes();
  const rss = process.memoryUsage.rss();
  if (used - baseline < COLLECT_AFTER_GROWTH_BYTES && rss - rssBaseline < COLLECT_AFTER_RSS_GROWTH_BYTES) {
    // V8 may have collected on its own meanwhile: growth counts from the lowest point seen.
    baseline = Math.min(baseline, used);
    rssBaseline = Math.min(rssBaseline, rss);
    return;
  }
  collectNow();
}

/**
 * Runs the quiet collection (QUIET_COLLECTION) now; false when V8's collector cannot be had. The idle
 * schedule above calls it; exported for tests.
 */
export function collectNow(): boolean {
  collect ??= obtainGc() ?? null;
  if (!collect) return false;
  // process.hrtime, not performance.now(): the global `performance` loads perf_hooks (1.3 MB resident on
  // Node 24), which the first collection, after loading, would otherwise bring into every idle server.
  const started = process.hrtime.bigint();
  if (GC_READS_OPTIONS) collect(QUIET_COLLECTION);
  else collect();
  collections++;
  baseline = usedBytes();
  rssBaseline = process.memoryUsage.rss();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  log.debug(`collected garbage in ${ms.toFixed(1)} ms`);
  return true;
}

/**
 * Elements of each short-lived array that rewriteYoungGeneration allocates: about 0.5 KB (8 bytes an
 * element, plus the headers), far below the size V8 puts in its large-object space instead.
 */
const REWRITE_ARRAY_LENGTH = 64;
/** What each such array is counted as: less than it takes, so that at least the young generation's size is allocated. */
const REWRITE_ARRAY_BYTES = REWRITE_ARRAY_LENGTH * 8;
/** The young generation's size when V8 does not report it (two semi-spaces of 1 MB, Node 20 to 24's start). */
const YOUNG_GENERATION_FALLBACK_BYTES = 2 * 1024 * 1024;
/**
 * A young generation larger than this (node started with a larger --min-semi-space-size) is left alone:
 * rewriting it would cost more than the faults it saves.
 */
export const MAX_REWRITE_BYTES = 8 * 1024 * 1024;

/** Where rewriteYoungGeneration's arrays go, each in turn, so that the compiler cannot leave them out. */
const rewriteSink: unknown[] = [];
let rewrites = 0;

/** How many times this process has rewritten its young generation after a fork (for diagnostics and tests). */
export function youngGenerationRewrites(): number {
  return rewrites;
}

/**
 * Makes the young generation's pages this process's own again after it forked; a long-running host does
 * it at the first quiet moment after each asynchronous spawn (above). A fork marks every writable page of
 * the process copy-on-write; once the child has exec'd, each page belongs to this process alone again, but
 * the first write to it still traps into the kernel. V8 allocates every new object in the young
 * generation, so the next call would take those traps for its first MB or two of objects and in the
 * scavenge that follows. Every call of the MCP server and the agent is followed by such a fork (the
 * session's next waiting shell, src/process/prestart.ts): on the VM of docs/PERFORMANCE.md the next call
 * took 180 more minor faults and 1 to 5 ms more CPU (Grep content while rg wants both cores, or a Bash
 * `echo`). Allocating the young generation's size in short-lived arrays while the process is quiet takes
 * those faults then, with nobody waiting (0.5 to 3 ms). The memory stays the same: the young generation
 * does not grow (YOUNG_GENERATION_FLAG). Returns the bytes allocated: none unless a host enabled idle
 * collection, or when the young generation is larger than MAX_REWRITE_BYTES.
 */
export function rewriteYoungGeneration(): number {
  if (!enabled) return 0;
  forked = false;
  const space = getHeapSpaceStatistics().find((entry) => entry.space_name === "new_space");
  const bytes = space?.space_size || YOUNG_GENERATION_FALLBACK_BYTES;
  if (bytes > MAX_REWRITE_BYTES) {
    log.debug(`the young generation (${bytes} bytes) is too large to rewrite after a fork`);
    return 0;
  }
  let done = 0;
  for (; done < bytes; done += REWRITE_ARRAY_BYTES)
    rewriteSink[0] = new Array(REWRITE_ARRAY_LENGTH).fill(done);
  rewriteSink.length = 0;
  rewrites++;
  return done;
}
