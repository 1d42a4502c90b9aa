import { groupMembers, type ProcStat, procPipes, procWchan } from "./procfs.js";

/**
 * Whether a command is really waiting for input, as the kernel sees it. A quiet command whose last line
 * looks like a prompt may still be working (`echo "Migrate? [y/N]"; sleep 5; ...` sleeps, it does not
 * read; `(…; sleep 8) | cat` reads, but from its own pipeline), and stopping it would interrupt real work;
 * one blocked reading input nobody in the command will ever send is waiting for an answer that will not come.
 */

/** Kernel wait channels (/proc/<pid>/wchan) of a process blocked on input: reads, poll/select, FIFO opens. */
const INPUT_WAIT = /read|poll|select|wait_woken|wait_for_partner|tty/;

/**
 * True when a process of group `pgid` is blocked waiting for input from outside the command, false when
 * none is (a member running, or reading only from another member); undefined where /proc cannot tell (not
 * Linux, or wait channels hidden), so the caller falls back to the prompt text alone. Processes named
 * in `ignoreNames` are not the command's (the sandbox launcher and bridge, which wait on their own descriptors).
 */
export function groupWaitsForInput(pgid: number, ignoreNames: readonly string[] = []): boolean | undefined {
  const group = groupMembers(pgid, ignoreNames);
  if (!group) return undefined;
  // No member left means the command is ending (its last output may not have been read yet): not waiting.
  if (group.length === 0) return false;
  // A member that is running (or in disk I/O) means the command is working.
  if (group.some((m) => m.state === "R" || m.state === "D")) return false;
  let hidden = 0;
  const blocked: ProcStat[] = [];
  for (const member of group) {
    const wchan = procWchan(member.pid);
    if (wchan === undefined) continue;
    if (wchan === "" || wchan === "0") hidden++;
    else if (INPUT_WAIT.test(wchan)) blocked.push(member);
  }
  if (blocked.length === 0) return hidden === group.length ? undefined : false;
  const held = new Map(group.map((m) => [m.pid, new Set(procPipes(m.pid).values())]));
  // Waiting for outside input unless its stdin is a pipe another member of the command holds open.
  return blocked.some((reader) => {
    const stdin = procPipes(reader.pid).get("0");
    return !stdin || !group.some((m) => m.pid !== reader.pid && held.get(m.pid)?.has(stdin));
  });
}
