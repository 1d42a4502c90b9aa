import { setTimeout as sleep } from "node:timers/promises";
import { killAllEscapeesNow } from "./escapees.js";
import { clearRegistry, forgetGroup, recordGroup } from "./group-registry.js";
import { groupMembers, type PidMark } from "./procfs.js";

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
export function groupAlive(
  pgid: number,
  ignoreNames: readonly string[] = [],
  createdAfter?: PidMark,
): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = groupMembers(pgid, ignoreNames, createdAfter);
  return members === undefined || members.length > 0;
}

/**
 * SIGTERM to the whole group, then SIGKILL to whatever is left after the grace period. Once
 * `hold.keepAlive` turns false, the wait no longer keeps the host running: nobody awaits it any more (a
 * time-out already returned), and a host with nothing else to do exits, its exit handler SIGKILLing the
 * group at once. Processes named in `launcherNames` are killed at once when nothing else is left, instead
 * of after the grace period.
 */
export async function killGroup(
  pgid: number,
  graceMs = KILL_GRACE_MS,
  hold: { keepAlive: boolean } = { keepAlive: true },
  launcherNames: readonly string[] = [],
  /** A mark taken before the group's leader was spawned: only processes created since are looked at. */
  createdAfter?: PidMark,
): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(KILL_POLL_MS, undefined, { ref: hold.keepAlive });
    if (!groupAlive(pgid, [], createdAfter)) return;
    // The sandbox's launcher (bwrap, whose PID-namespace init ignores SIGTERM) alone is left: kill it now.
    if (launcherNames.length > 0 && !groupAlive(pgid, launcherNames, createdAfter)) break;
  }
  signalGroup(pgid, "SIGKILL");
}

/** Work for the moment this host goes, after its groups are killed (see onHostExit). */
const exitWork: Array<() => void> = [];

/**
 * Runs `work` (synchronous) when this host exits, normally or by SIGINT, SIGTERM or SIGHUP, after every
 * group it started was killed: what only those commands used can then be cleaned up.
 */
export function onHostExit(work: () => void): void {
  installHandlers();
  exitWork.push(work);
}

function killAllNow(): void {
  for (const pgid of liveGroups) signalGroup(pgid, "SIGKILL");
  liveGroups.clear();
  killAllEscapeesNow();
  clearRegistry();
  for (const work of exitWork) {
    try {
      work();
    } catch {
      // the host is going: what cannot be cleaned up now is swept by the next one
    }
  }
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

/** Registers a group so host exit kills it, and (on disk) so the next host reaps it if this one is SIGKILLed. */
export function trackGroup(pgid: number): void {
  installHandlers();
  liveGroups.add(pgid);
  recordGroup(pgid);
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
  forgetGroup(pgid);
}
