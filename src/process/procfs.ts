import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { availableParallelism } from "node:os";

/**
 * The one reader of Linux's /proc for process supervision: which processes exist, their state, group and
 * start time, and their environment. Everything here answers "unknown" (undefined) where /proc is missing
 * (macOS, BSD, Windows); callers then fall back to what signals alone can tell (see README, "Platforms").
 */

export interface ProcStat {
  pid: number;
  /** The command name (/proc/<pid>/comm, as stat shows it between parentheses). */
  name: string;
  /** R running, S sleeping, D disk wait, Z zombie, X dead, T stopped, ... */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Clock ticks after boot at which the process started: with the pid, identifies it across pid reuse. */
  startTime: string;
}

/** Ids of all processes, or undefined without /proc. */
export function allPids(): number[] | undefined {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return undefined;
  }
}

/** The last process id the kernel handed out (last field of /proc/loadavg); undefined when unknown. */
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

/**
 * More processes than a machine can create per millisecond and core: a tight fork-and-exit loop in C
 * reaches 10 to 30 per ms on a fast core, so this leaves a wide margin against a command that churns
 * through ids on purpose to hide a process that escaped. Ids wrap around at pid_max, so a mark is
 * trusted only while fewer ids than that could have been handed out since it was taken (with pid_max
 * 32768 on two cores, about 160 ms; with 4194304, about 20 s).
 */
const MAX_FORKS_PER_MS_PER_CORE = 100;

/** Where the kernel's process ids stood at one moment: lastPid() and when it was read. */
export interface PidMark {
  last: number;
  at: number;
  /** Ids looked at as well, whenever they were created (a shell started ahead of its command, see prestart.ts). */
  also?: readonly number[];
}

let pidMaxCache: number | undefined;

/** /proc/sys/kernel/pid_max; the old default 32768 when unreadable. */
function pidMax(): number {
  if (pidMaxCache === undefined) {
    try {
      pidMaxCache = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim()) || 32_768;
    } catch {
      pidMaxCache = 32_768;
    }
  }
  return pidMaxCache;
}

/** The kernel's last process id now; undefined without /proc. */
export function pidMark(): PidMark | undefined {
  const last = lastPid();
  return last === undefined ? undefined : { last, at: Date.now() };
}

/**
 * Ids of processes that may have been created after `mark` (all processes without one); undefined
 * without /proc. Everything a command started (in its group, its session, or escaped from both) was
 * created after the mark taken before it was spawned, so its supervisor looks at these ids, not at every
 * process on the machine. Ids are handed out in increasing order and wrap around at pid_max; once enough
 * time has passed for a whole wrap to be possible, every process is looked at again.
 */
export function pidsCreatedAfter(mark: PidMark | undefined): number[] | undefined {
  const since = mark?.last;
  const last = lastPid();
  const maxCreated = (Date.now() - (mark?.at ?? 0)) * MAX_FORKS_PER_MS_PER_CORE * availableParallelism();
  const trusted = since !== undefined && last !== undefined && maxCreated < pidMax();
  const also = mark?.also ?? [];
  if (trusted && last >= since && last - since <= DIRECT_PROBE_MAX) {
    const ids = Array.from({ length: last - since }, (_, i) => since + 1 + i);
    return [...also.filter((pid) => !ids.includes(pid)), ...ids];
  }
  const ids = allPids();
  if (!ids || !trusted) return ids;
  return ids.filter(
    (pid) => also.includes(pid) || (last >= since ? pid > since && pid <= last : pid > since || pid <= last),
  );
}

/** A process's /proc/<pid>/stat, or undefined when it is gone (or /proc is missing). */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // After the command name (which may hold spaces and parentheses): state, ppid, pgrp, session, ...,
  // starttime is field 22 of the whole line, so index 19 after the name.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    name: text.slice(text.indexOf("(") + 1, text.lastIndexOf(")")),
    state: fields[0]!,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTime: fields[19]!,
  };
}

/** True for a process that has ended and only waits to be reaped. */
export function isZombie(stat: ProcStat): boolean {
  return stat.state === "Z" || stat.state === "X";
}

/**
 * Live (non-zombie) members of process group `pgid`; undefined without /proc. Processes named in
 * `ignoreNames` are left out (the sandbox's launcher and bridge, which are not the command's). With
 * `createdAfter` (a mark taken before the group's leader was spawned), only processes created since
 * are looked at: every member of a group that leads its own session descends from its leader.
 */
export function groupMembers(
  pgid: number,
  ignoreNames: readonly string[] = [],
  createdAfter?: PidMark,
): ProcStat[] | undefined {
  const pids = pidsCreatedAfter(createdAfter);
  if (!pids) return undefined;
  const found: ProcStat[] = [];
  for (const pid of pids) {
    const stat = procStat(pid);
    if (stat && stat.pgrp === pgid && !isZombie(stat) && !ignoreNames.includes(stat.name)) found.push(stat);
  }
  return found;
}

/** A process's environment block (NUL-separated), or undefined when gone or not ours to read. */
export function procEnviron(pid: number): Buffer | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
}

/** The kernel function a process sleeps in (/proc/<pid>/wchan): "" or "0" when hidden; undefined when gone. */
export function procWchan(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/wchan`, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** The pipes (`pipe:[inode]`) a process holds open, by descriptor. */
export function procPipes(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (target.startsWith("pipe:")) out.set(fd, target);
      } catch {
        // closed while we looked
      }
    }
  } catch {
    // gone, or not ours to see
  }
  return out;
}
