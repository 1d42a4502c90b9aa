import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Whether a command is really waiting for input, as the kernel sees it. A quiet command whose last line
 * looks like a prompt may still be working (`echo "Migrate? [y/N]"; sleep 5; ...` sleeps, it does not
 * read; `(…; sleep 8) | cat` reads, but from its own pipeline), and stopping it would interrupt real work;
 * one blocked reading input nobody in the command will ever send is waiting for an answer that will not come.
 */

/** Kernel wait channels (/proc/<pid>/wchan) of a process blocked on input: reads, poll/select, FIFO opens. */
const INPUT_WAIT = /read|poll|select|wait_woken|wait_for_partner|tty/;

interface Member {
  pid: string;
  state: string;
}

function members(pgid: number, ignoreNames: readonly string[]): Member[] | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const found: Member[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command name (which may hold spaces and parentheses): state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Zombies have ended; only their exit status is left to collect.
      if (Number(fields[2]) !== pgid || fields[0] === "Z" || fields[0] === "X") continue;
      if (ignoreNames.includes(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")))) continue;
      found.push({ pid, state: fields[0]! });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** The pipes (`pipe:[inode]`) a process holds open, by descriptor. */
function pipes(pid: string): Map<string, string> {
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

/**
 * True when a process of group `pgid` is blocked waiting for input from outside the command, false when
 * none is (a member running, or reading only from another member); undefined where /proc cannot tell (not
 * Linux, or wait channels hidden), so the caller falls back to the prompt text alone. Processes named
 * in `ignoreNames` are not the command's (the sandbox launcher and bridge, which wait on their own descriptors).
 */
export function groupWaitsForInput(pgid: number, ignoreNames: readonly string[] = []): boolean | undefined {
  const group = members(pgid, ignoreNames);
  if (!group) return undefined;
  // No member left means the command is ending (its last output may not have been read yet): not waiting.
  if (group.length === 0) return false;
  // A member that is running (or in disk I/O) means the command is working.
  if (group.some((m) => m.state === "R" || m.state === "D")) return false;
  let hidden = 0;
  const blocked: Member[] = [];
  for (const member of group) {
    let wchan: string;
    try {
      wchan = readFileSync(`/proc/${member.pid}/wchan`, "utf8").trim();
    } catch {
      continue;
    }
    if (wchan === "" || wchan === "0") hidden++;
    else if (INPUT_WAIT.test(wchan)) blocked.push(member);
  }
  if (blocked.length === 0) return hidden === group.length ? undefined : false;
  const held = new Map(group.map((m) => [m.pid, new Set(pipes(m.pid).values())]));
  // Waiting for outside input unless its stdin is a pipe another member of the command holds open.
  return blocked.some((reader) => {
    const stdin = pipes(reader.pid).get("0");
    return !stdin || !group.some((m) => m.pid !== reader.pid && held.get(m.pid)?.has(stdin));
  });
}
