import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log } from "../core/log.js";
import { processAlive } from "../core/pid.js";
import { HOST_TOKEN, killAllEscapeesNow } from "./escapees.js";
import { procStat } from "./procfs.js";

/**
 * The process groups this host has running, on disk, so that a host killed with SIGKILL (no exit handler
 * runs) does not leave its command trees behind for good: the next host to start a command reaps them.
 * One file per host in the runtime dir ($XDG_RUNTIME_DIR/cc-tools/groups, else <tmp>/cc-tools-<uid>/groups;
 * both empty after a reboot, when the ids mean nothing), named by the host's marker token, holding the host
 * pid and start time and one "<pgid> <start time>" line per group.
 *
 * A pid is reused, so nothing is killed on its number alone: a host counts as dead when no process has its
 * pid and start time, and a group is killed only if its leader is the process recorded (same start time),
 * or the leader is gone and the group still exists (a pid in use as a group id is never handed out again).
 * Linux only (it needs start times from /proc); elsewhere nothing is recorded.
 */

let registryFile: string | null | undefined;
/** This host's start time, read once (it never changes). */
let hostStartTime: string | undefined;
const recorded = new Map<number, string>();

function registryDir(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime
    ? join(runtime, "cc-tools", "groups")
    : join(tmpdir(), `cc-tools-${process.getuid?.() ?? "user"}`, "groups");
}

/** The registry dir, made private to this user; undefined when it cannot be trusted or made. */
function openRegistry(): string | undefined {
  const dir = registryDir();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    const uid = process.getuid?.();
    // Someone else's directory (made first in a shared /tmp) could feed us pids to kill.
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0)
      return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** A forget not yet written (see forgetGroup). */
let saveScheduled = false;

function save(): void {
  saveScheduled = false;
  if (!registryFile) return;
  try {
    if (recorded.size === 0) {
      unlinkSync(registryFile);
      return;
    }
    const lines = [`host ${process.pid} ${hostStartTime}`, ...[...recorded].map(([g, t]) => `${g} ${t}`)];
    // A new file rather than the old one truncated and rewritten: ext4 writes a truncated file's new
    // blocks out at close (auto_da_alloc), 1-4 ms per command here, against 0.05 ms for unlink and create.
    // A reader sees no file or a partial one for a moment either way.
    rmSync(registryFile, { force: true });
    writeFileSync(registryFile, `${lines.join("\n")}\n`, { mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      log.debug("could not record process groups", error);
  }
}

/** SIGKILLs what a dead host's registry file lists, then removes the file. */
function reapFile(path: string, hostToken: string): void {
  let lines: string[];
  try {
    lines = readFileSync(path, "utf8").split("\n");
  } catch {
    return;
  }
  const [, hostPid, hostStart] = (lines[0] ?? "").split(" ");
  const host = procStat(Number(hostPid));
  if (
    hostPid === undefined ||
    (host && host.startTime === hostStart) ||
    (!host && processAlive(Number(hostPid)))
  )
    return;
  let reaped = 0;
  for (const line of lines.slice(1)) {
    const [pgid, startTime] = line.split(" ").map((f) => f.trim());
    const group = Number(pgid);
    if (!Number.isInteger(group) || group <= 1) continue;
    const leader = procStat(group);
    if (leader ? leader.startTime !== startTime : false) continue;
    try {
      process.kill(-group, "SIGKILL");
      reaped++;
    } catch {
      // already gone
    }
  }
  killAllEscapeesNow(hostToken);
  if (reaped > 0)
    log.warn(`reaped ${reaped} process group(s) left by a killed cc-tools host (pid ${hostPid})`);
  try {
    unlinkSync(path);
  } catch {
    // another host reaped it first
  }
}

/** Opens this host's registry, reaping what dead hosts left; once per process, on the first command. */
function start(): void {
  if (registryFile !== undefined) return;
  registryFile = null;
  hostStartTime = procStat(process.pid)?.startTime;
  if (hostStartTime === undefined) return;
  const dir = openRegistry();
  if (!dir) return;
  for (const name of readdirSync(dir)) if (name !== HOST_TOKEN) reapFile(join(dir, name), name);
  registryFile = join(dir, HOST_TOKEN);
}

export function recordGroup(pgid: number): void {
  start();
  const startTime = procStat(pgid)?.startTime;
  if (!registryFile || startTime === undefined) return;
  recorded.set(pgid, startTime);
  save();
}

/**
 * The group is gone. The file is rewritten on the event loop's next turn, after the command's result is
 * on its way (or with the next record, or at exit, whichever comes first): until then it still lists a
 * dead group, which a reaper skips (its leader is gone and so is the group, or the id now belongs to a
 * process with another start time).
 */
export function forgetGroup(pgid: number): void {
  if (!recorded.delete(pgid) || saveScheduled) return;
  saveScheduled = true;
  setImmediate(() => {
    if (saveScheduled) save();
  });
}

/** On host exit, after its groups were killed: nothing is left to reap. */
export function clearRegistry(): void {
  recorded.clear();
  save();
}
