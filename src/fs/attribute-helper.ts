import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { isMainThread } from "node:worker_threads";
import { log } from "../core/log.js";
import { hostProgram } from "../process/shells.js";
import { hostEnv } from "../sandbox/host-programs.js";

/**
 * Runs `cp --attributes-only` (see copyAttributes in atomic-write.ts) from a small helper process instead
 * of from this one. Spawning forks the spawner: the fork blocks for a time that grows with the spawner's
 * size, the child is as big as the spawner until it execs, and afterwards every page the spawner writes to
 * takes a fault (copy-on-write was armed on all of them), which for the next 10 MiB read costs as much as
 * fresh memory (in a library host's Edits of a 10 MiB file, 148 ms with a cp spawned per write against
 * 45 ms through the helper: each fork let the kept buffer go, see kept-buffer.ts). So every process copies
 * through the helper: a POSIX sh loop that reads pairs of paths on its stdin, one per line, runs cp for
 * each and prints its exit status. sh rather than bash because it waits beside its process for as long as
 * that runs: where sh is dash (Debian, Ubuntu) it is 1.6 MB resident against bash's 3.1.
 * The helper is started on the first write that replaces a file, and again after it died; it keeps
 * nothing alive, and ends when this process does (its stdin reaches EOF), even after kill -9. A worker
 * thread spawns cp itself: a child spawned from a worker's event loop is not reaped once the worker has
 * ended, so each worker that wrote would leave its helper behind as a zombie until the process exits.
 */

/**
 * The loop. A path comes as one line, its backslashes doubled and its newlines written `\n` (see
 * helperLine); a line with a backslash in it is decoded by printf's %b, the `x` keeping a final newline
 * from the command substitution, which would strip it. Other lines are the path as it is.
 */
const HELPER_SCRIPT =
  "while IFS= read -r from && IFS= read -r to; do " +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template
  'case "$from$to" in *\\\\*) from=$(printf "%bx" "$from"); from=${from%x}; to=$(printf "%bx" "$to"); to=${to%x};; esac; ' +
  'cp --attributes-only --preserve=mode,xattr -- "$from" "$to" 2>/dev/null; echo "$?"; done';

/** A path as one line of the helper's input (see HELPER_SCRIPT). */
function helperLine(path: string): string {
  return `${path.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}\n`;
}

/**
 * Longest one copy may take through the helper. cp on a hung file system would hold up every later write's
 * copy behind it (one helper serves them in turn), so past this the helper and its cp are killed, and the
 * waiting writes spawn cp themselves, each on its own, as without the helper.
 */
const HELPER_ANSWER_TIMEOUT_MS = 10_000;

let helper: Helper | undefined;

class Helper {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private output = "";
  private readonly waiting: Array<(status: number | undefined) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  dead = false;

  constructor(sh: string) {
    // Without BASH_ENV and ENV, which a shell could source first (bash as sh, or bash); its cp, like
    // itself, from outside the places a sandboxed command writes (see sandbox/host-programs.ts).
    const { BASH_ENV: _, ENV: __, ...env } = hostEnv();
    // Its own process group, so a kill reaches the cp it runs too.
    this.child = spawn(sh, ["-c", HELPER_SCRIPT], {
      stdio: ["pipe", "pipe", "ignore"],
      env,
      detached: true,
    });
    this.child.on("error", (error) => this.end(error));
    this.child.on("exit", () => this.end());
    // Without free descriptors (EMFILE) spawn gives no pipes, and its error comes a turn later.
    if (!this.child.stdin || !this.child.stdout) {
      this.end(new Error("the helper's pipes could not be made"));
      return;
    }
    this.child.stdin.on("error", (error) => this.end(error));
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.output += chunk;
      for (let nl = this.output.indexOf("\n"); nl !== -1; nl = this.output.indexOf("\n")) {
        const status = Number(this.output.slice(0, nl));
        this.output = this.output.slice(nl + 1);
        this.waiting.shift()?.(status);
        this.watch();
        if (this.waiting.length === 0) this.idle();
      }
    });
    // An idle helper keeps nothing alive: the process may exit with it still running (it then sees EOF).
    this.child.unref();
    this.idle();
  }

  /** cp's exit status, or undefined when the helper could not run it. */
  copy(from: string, to: string): Promise<number | undefined> {
    if (this.dead) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      if (this.waiting.length === 0) this.busy();
      this.waiting.push(resolve);
      if (this.waiting.length === 1) this.watch();
      this.child.stdin.write(helperLine(from) + helperLine(to));
    });
  }

  /** Times the oldest request: each answer restarts the clock for the next. */
  private watch(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting.length === 0 || this.dead) return;
    this.timer = setTimeout(() => this.end(new Error("cp did not finish in time")), HELPER_ANSWER_TIMEOUT_MS);
    this.timer.unref();
  }

  private busy(): void {
    (this.child.stdout as unknown as { ref(): void }).ref();
  }

  private idle(): void {
    (this.child.stdout as unknown as { unref(): void }).unref();
  }

  private end(error?: Error): void {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.timer);
    if (error) log.debug("the attribute helper failed; cp is spawned directly", error);
    try {
      if (this.child.pid !== undefined && this.child.exitCode === null)
        process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    for (const resolve of this.waiting.splice(0)) resolve(undefined);
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
  }
}

/**
 * Runs cp through the helper; undefined when there is no sh outside the sandbox's reach or the helper could
 * not run it (the caller then spawns cp itself).
 */
export async function copyThroughHelper(from: string, to: string): Promise<number | undefined> {
  if (!isMainThread) return undefined;
  const sh = hostProgram("sh");
  if (!sh) return undefined;
  if (!helper || helper.dead) {
    try {
      helper = new Helper(sh);
    } catch (error) {
      // A spawn that throws (an environment too large for exec, E2BIG): cp is spawned directly.
      log.debug("could not start the attribute helper", error);
      return undefined;
    }
  }
  return helper.copy(from, to);
}
