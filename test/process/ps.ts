import { execFileSync } from "node:child_process";

/** Live (non-zombie) processes whose command line contains `marker`, as `ps -eo pid,pgid,stat,args` lines. */
export function survivors(marker: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid,pgid,stat,args"], { encoding: "utf8" });
  return out
    .split("\n")
    .slice(1)
    .filter((line) => line.includes(marker))
    .filter((line) => !/^\s*\d+\s+\d+\s+Z/.test(line));
}

/** A number to put in a command (`sleep 7312...`) so ps finds exactly that test's processes. */
export function uniqueSeconds(): string {
  return `9${Math.floor(Math.random() * 1e8)}`;
}

/** Polls until `check` holds or `ms` pass; for effects that follow a kill by a few milliseconds. */
export async function eventually(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
