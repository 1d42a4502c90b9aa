import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { killAllEscapeesNow } from "./escapees.js";

/** How long a process group gets between SIGTERM and SIGKILL to clean up. */
export const KILL_GRACE_MS = 2_000;
/** How often a terminating group is checked for survivors. */
const KILL_POLL_MS = 20;

/**
 * Every process group we started that may still be alive, process-wide: the exit handlers must reach them
 * all without knowing about sessions, because a session that is never disposed must still leave no orphans.
 */
const liveGroups = new Set<number>();
let handlersInstalled = false;

/** Sends `signal` to every process of the group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when a process of the group still runs. Zombies do not count: a killed command's orphans are
 * reaped by init, which in some containers takes seconds, and they hold nothing. Linux shows process
 * states in /proc; elsewhere any member, zombie or not, counts. Processes named in `ignoreNames` do not count
 * either (a sandbox launcher still tearing down its namespace after the command in it has ended).
 */
export function groupAlive(pgid: number, ignoreNames: readonly string[] = []): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the parenthesised command name: state, ppid, pgrp.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) !== pgid || state === "Z") continue;
      if (!ignoreNames.includes(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")))) {
        return true;
      }
    } catch {
      // the process ended while we looked
    }
  }
  return false;
}

/**
 * SIGTERM to the whole group, then SIGKILL to whatever is left after the grace period. Processes named in
 * `launcherNames` (the sandbox's bwrap, whose PID-namespace init ignores SIGTERM) are killed at once when
 * nothing else is left, instead of after the grace period.
 */
export async function killGroup(
  pgid: number,
  graceMs = KILL_GRACE_MS,
  launcherNames: readonly string[] = [],
): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(KILL_POLL_MS);
    if (!groupAlive(pgid)) return;
    if (launcherNames.length > 0 && !groupAlive(pgid, launcherNames)) break;
  }
  signalGroup(pgid, "SIGKILL");
}

function killAllNow(): void {
  for (const pgid of liveGroups) signalGroup(pgid, "SIGKILL");
  liveGroups.clear();
  killAllEscapeesNow();
}

/**
 * On a signal, kill every group synchronously, then let the signal do what it would have done: when no
 * one else listens for it, remove our listener and raise it again so the default action (exit) proceeds.
 */
function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", killAllNow);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
}

/** Registers a group so host exit kills it; the exit handlers are installed on first use. */
export function trackGroup(pgid: number): void {
  installHandlers();
  liveGroups.add(pgid);
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}
