import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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
 * `ignoreNames` are left out (the sandbox's launcher and bridge, which are not the command's).
 */
export function groupMembers(pgid: number, ignoreNames: readonly string[] = []): ProcStat[] | undefined {
  const pids = allPids();
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

/** The last process id the kernel handed out (last field of /proc/loadavg); undefined when unknown. */
export function lastPid(): number | undefined {
  try {
    const pid = Number(readFileSync("/proc/loadavg", "utf8").trim().split(" ").pop());
    return Number.isInteger(pid) ? pid : undefined;
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
