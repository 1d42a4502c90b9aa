import { readdirSync, readFileSync } from "node:fs";

/**
 * Whether a command is really waiting for input, as the kernel sees it. A quiet command whose last line
 * looks like a prompt may still be working (`echo "Migrate? [y/N]"; sleep 5; ...` sleeps, it does not
 * read), and stopping it would interrupt real work; one blocked reading a pipe, a FIFO or a terminal, or
 * waiting in poll/select, is waiting for an answer that will not come.
 */

/** Kernel wait channels (/proc/<pid>/wchan) of a process blocked on input: reads, poll/select, FIFO opens. */
const INPUT_WAIT = /read|poll|select|wait_woken|wait_for_partner|tty/;

/**
 * True when a process of group `pgid` is blocked waiting for input, false when none is; undefined where
 * /proc cannot tell (not Linux, or wait channels hidden), so the caller falls back to the prompt text alone.
 */
export function groupWaitsForInput(pgid: number): boolean | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let members = 0;
  let hidden = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command name (which may hold spaces and parentheses): state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Zombies have ended; only their exit status is left to collect.
      if (Number(fields[2]) !== pgid || fields[0] === "Z" || fields[0] === "X") continue;
      members++;
      const wchan = readFileSync(`/proc/${pid}/wchan`, "utf8").trim();
      if (wchan === "" || wchan === "0") hidden++;
      else if (INPUT_WAIT.test(wchan)) return true;
    } catch {
      // the process ended while we looked
    }
  }
  // No member left means the command is ending (its last output may not have been read yet): not waiting.
  if (members === 0) return false;
  return hidden === members ? undefined : false;
}
