import { setTimeout as sleep } from "node:timers/promises";
import { isZombie, type PidMark, pidsCreatedAfter, procEnviron, procStat } from "./procfs.js";

/**
 * A process that calls setsid (daemons, `setsid cmd &`) leaves its process group, so killing the group
 * misses it. Every supervised command carries this variable in its environment, which its descendants
 * inherit whatever group or session they move to; after the command ends, the processes that still carry
 * its value are found in /proc and killed. The command also starts its own session (setsid), which its
 * descendants keep unless they call setsid themselves; so a process that drops the variable
 * (`env -u CC_TOOLS_RUN cmd &`) is still found by its session id. What escapes both is a process that
 * clears its environment AND starts a new session (`setsid env -i cmd`): only a cgroup would hold that.
 */
export const RUN_MARKER_VAR = "CC_TOOLS_RUN";

/**
 * This host process's part of every marker, so host exit can find all of its runs' processes. It only has
 * to differ from every other host's (the pid does, among live ones; the random part, from a host that
 * had this pid before): Math.random, not node:crypto, which an idle MCP server would load for this alone
 * (3 MB resident on Node 24).
 */
export const HOST_TOKEN = `${process.pid}-${Math.floor(Math.random() * 2 ** 32)
  .toString(16)
  .padStart(8, "0")}`;
let runCounter = 0;
/** How often escaped processes are checked while they get their grace period. */
const ESCAPEE_POLL_MS = 20;

/** A fresh marker value for one run. */
export function newRunMarker(): string {
  return `${HOST_TOKEN}.${++runCounter}`;
}

/**
 * Live processes whose environment holds `needle`, or (when `sessionId` is given) that are still in that
 * session. Zombies have an empty environment and are skipped.
 */
function processesWith(
  needle: Buffer,
  createdAfter: PidMark | undefined,
  sessionId?: number,
  ignoreNames: readonly string[] = [],
): number[] {
  const found: number[] = [];
  for (const pid of pidsCreatedAfter(createdAfter) ?? []) {
    if (pid === process.pid) continue;
    if (sessionId !== undefined || ignoreNames.length > 0) {
      // One read of stat per process: name, state and session decide most cases without the environment.
      const stat = procStat(pid);
      if (!stat || isZombie(stat) || ignoreNames.includes(stat.name)) continue;
      if (stat.session === sessionId) {
        found.push(pid);
        continue;
      }
    }
    const environ = procEnviron(pid);
    const at = environ?.indexOf(needle) ?? -1;
    if (at === 0 || (at > 0 && environ![at - 1] === 0)) found.push(pid);
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
 * Kills every process still carrying this run's marker or still in its session (`sessionId`, the run's
 * first pid): SIGTERM, then SIGKILL after the grace period. `createdAfter` is a pidMark() from before the
 * run started. Resolves true when there were any.
 */
export async function killEscapees(
  marker: string,
  createdAfter: PidMark | undefined,
  graceMs: number,
  /** `sessionId`: the run's session; `ignoreNames`: processes that are not the command's (the sandbox's launcher). */
  scope: { sessionId?: number; ignoreNames?: readonly string[] } = {},
): Promise<boolean> {
  const needle = markerNeedle(marker);
  const find = () => processesWith(needle, createdAfter, scope.sessionId, scope.ignoreNames);
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

/** SIGKILL, synchronously, every process any run of host `hostToken` (this host by default) left anywhere. */
export function killAllEscapeesNow(hostToken = HOST_TOKEN): void {
  signalAll(processesWith(Buffer.from(`${RUN_MARKER_VAR}=${hostToken}.`), undefined), "SIGKILL");
}
