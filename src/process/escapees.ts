import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A process that calls setsid (daemons, `setsid cmd &`) leaves its process group, so killing the group
 * misses it. Every supervised command carries this variable in its environment, which its descendants
 * inherit whatever group or session they move to; after the command ends, the processes that still carry
 * its value are found in /proc and killed. (A program that clears its whole environment still escapes.)
 */
export const RUN_MARKER_VAR = "CC_TOOLS_RUN";

/** This host process's part of every marker, so host exit can find all of its runs' processes. */
const HOST_TOKEN = `${process.pid}-${randomBytes(4).toString("hex")}`;
let runCounter = 0;
/** How often escaped processes are checked while they get their grace period. */
const ESCAPEE_POLL_MS = 20;

/** A fresh marker value for one run. */
export function newRunMarker(): string {
  return `${HOST_TOKEN}.${++runCounter}`;
}

/**
 * The last process id the kernel handed out (the last field of /proc/loadavg); undefined when unknown.
 * Taken before a run starts, it bounds the ids of the processes the run can have created.
 */
export function lastPid(): number | undefined {
  try {
    const pid = Number(readFileSync("/proc/loadavg", "utf8").trim().split(" ").pop());
    return Number.isInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Up to this many ids are probed one by one; past it, /proc is listed (cheaper for wide ranges). */
const DIRECT_PROBE_MAX = 64;

/** Ids of processes that may have been created after `since` (all of them when `since` is undefined). */
function idsCreatedAfter(since: number | undefined): number[] {
  const last = lastPid();
  if (since !== undefined && last !== undefined && last >= since && last - since <= DIRECT_PROBE_MAX) {
    return Array.from({ length: last - since }, (_, i) => since + 1 + i);
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const ids = entries.map(Number).filter((pid) => Number.isInteger(pid));
  if (since === undefined || last === undefined) return ids;
  // Ids are handed out in increasing order and wrap around at pid_max.
  return ids.filter((pid) => (last >= since ? pid > since && pid <= last : pid > since || pid <= last));
}

/** Live processes whose environment holds `needle` (zombies have an empty environment). */
function processesWith(
  needle: Buffer,
  createdAfter: number | undefined,
  ignoreNames: readonly string[] = [],
): number[] {
  const found: number[] = [];
  for (const pid of idsCreatedAfter(createdAfter)) {
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`);
      const at = environ.indexOf(needle);
      if (at !== 0 && !(at > 0 && environ[at - 1] === 0)) continue;
      if (ignoreNames.length > 0 && ignoreNames.includes(readFileSync(`/proc/${pid}/comm`, "utf8").trim()))
        continue;
      found.push(pid);
    } catch {
      // no such process, or not ours to read
    }
  }
  return found;
}

function markerNeedle(marker: string): Buffer {
  return Buffer.from(`${RUN_MARKER_VAR}=${marker}\0`);
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Kills every process still carrying this run's marker: SIGTERM, then SIGKILL after the grace period.
 * `createdAfter` is lastPid() from before the run started. Resolves true when there were any. Processes
 * named in `ignoreNames` are not the command's (the sandbox's launcher, still ending its namespace).
 */
export async function killEscapees(
  marker: string,
  createdAfter: number | undefined,
  graceMs: number,
  ignoreNames: readonly string[] = [],
): Promise<boolean> {
  const needle = markerNeedle(marker);
  const find = () => processesWith(needle, createdAfter, ignoreNames);
  const escaped = find();
  if (escaped.length === 0) return false;
  signalAll(escaped, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(ESCAPEE_POLL_MS);
    if (find().length === 0) return true;
  }
  signalAll(find(), "SIGKILL");
  return true;
}

/** On host exit: SIGKILL, synchronously, every process any run of this host left anywhere. */
export function killAllEscapeesNow(): void {
  signalAll(processesWith(Buffer.from(`${RUN_MARKER_VAR}=${HOST_TOKEN}.`), undefined), "SIGKILL");
}
