import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { errorMessage } from "../core/errors.js";
import { killEscapees, newRunMarker, RUN_MARKER_VAR } from "./escapees.js";
import { groupAlive, KILL_GRACE_MS, killGroup, trackGroup, untrackGroup } from "./groups.js";
import type { PrestartedShell } from "./prestart.js";
import { type PidMark, pidMark } from "./procfs.js";
import { GO_AHEAD, GO_AHEAD_FD } from "./shells.js";

/** How often a running command is checked for waiting on input. */
const STALL_POLL_MS = 500;
/**
 * After the group is dead, how long to wait for its pipes to close before closing them ourselves (a
 * process that escaped the group with setsid could otherwise hold them open forever).
 */
const PIPE_CLOSE_GRACE_MS = 1_000;

/**
 * After a time-out, how long `done` waits for the group to die before it resolves anyway: a time-out
 * returns at its time, and the kill (TERM, then KILL after KILL_GRACE_MS) finishes in the background.
 */
const TIMEOUT_RETURN_WAIT_MS = 200;

/** Why a supervised command ended. */
export type EndReason = "exited" | "timeout" | "aborted" | "stalled" | "stopped" | "spawnFailed";

export interface Outcome {
  reason: EndReason;
  /** The exit code; null when the process was ended by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** True when the command exited but left processes in its group, which were then killed. */
  straysKilled: boolean;
  /** Why the process could not be started (reason "spawnFailed"). */
  spawnError?: string;
  /**
   * A timed-out command was still stopping when its result was returned: it got SIGTERM, and gets SIGKILL
   * after KILL_GRACE_MS; the host's exit handlers reach it until it is gone.
   */
  stillStopping?: boolean;
}

export interface SuperviseOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is /dev/null, so reads end at once. */
  stdin?: string;
  /** The command waits for the go-ahead: GO_AHEAD is written on GO_AHEAD_FD (a pipe then), which is then closed. */
  gated?: boolean;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /** Kill the group after this long; no limit when undefined (background jobs). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Process names of a launcher that wraps the command (the sandbox's bwrap): its own processes still in the group when
   * the command has ended are not strays the command left behind.
   */
  launcherNames?: readonly string[];
  /**
   * Everything the command starts stays in a PID namespace that the kernel empties when its init exits,
   * before the launcher that waits for that init exits (the sandbox's bwrap, whose --die-with-parent also
   * ends the namespace if the launcher is killed): no process can have escaped it, however it detached,
   * so the scan of /proc for escaped processes after the exit is skipped.
   */
  contained?: boolean;
  /** Polled while the command runs, with the group's id; true stops it as waiting for input. */
  isWaitingForInput?: (pgid: number) => boolean;
  /**
   * A shell started ahead of the command (see prestart.ts): it runs the command instead of a spawn when it
   * can do so exactly, else it is killed and the command spawned.
   */
  prestarted?: PrestartedShell;
}

export interface Supervised {
  readonly pid: number | undefined;
  /**
   * Resolves once the whole group is gone and the output is drained, or, after a time-out, at most
   * TIMEOUT_RETURN_WAIT_MS later (then `stillStopping` is set). Never rejects.
   */
  readonly done: Promise<Outcome>;
  /** Resolves once the whole group is gone, time-out or not. */
  readonly finished: Promise<Outcome>;
  /** Kills the group (TERM, then KILL); `done` then resolves with reason "stopped". */
  stop(): Promise<Outcome>;
}

/**
 * Runs one command in its own process group (detached: setsid) with no terminal and no stdin, and
 * guarantees that when it ends, however it ends, nothing it started is left running.
 */
export function supervise(options: SuperviseOptions): Supervised {
  if (options.signal?.aborted) {
    // Cancelled before it started (during its launch): nothing runs, and a prestarted shell is killed.
    options.prestarted?.discard();
    return notStarted({ reason: "aborted", exitCode: null, signal: null, straysKilled: false });
  }
  // Before anything can start: a prestarted shell may exec and fork as soon as it is claimed.
  const mark = pidMark();
  const prestarted =
    options.stdin === undefined
      ? options.prestarted?.claim(options.file, options.args, options.cwd, options.env, options.gated)
      : options.prestarted?.discard();
  let marker: string;
  let pidsBefore: PidMark | undefined;
  let child: ReturnType<typeof spawn>;
  try {
    if (prestarted) {
      ({ child, marker } = prestarted);
      // Everything the command starts is created after the mark; its shell, created before, is added.
      pidsBefore = mark && { ...mark, also: [child.pid!] };
    } else {
      marker = newRunMarker();
      pidsBefore = mark;
      const stdio: Array<"ignore" | "pipe"> = [
        options.stdin === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
      ];
      if (options.gated) stdio[GO_AHEAD_FD] = "pipe";
      child = spawn(options.file, options.args, {
        cwd: options.cwd,
        env: { ...options.env, [RUN_MARKER_VAR]: marker },
        detached: true,
        stdio,
      });
      const gate = child.stdio[GO_AHEAD_FD] as Writable | undefined;
      gate?.on("error", () => {});
      gate?.end(GO_AHEAD);
    }
  } catch (error) {
    // Some failures (E2BIG: arguments too long) throw at once instead of emitting "error".
    return notStarted({
      reason: "spawnFailed",
      exitCode: null,
      signal: null,
      straysKilled: false,
      spawnError: errorMessage(error),
    });
  }
  const pid = child.pid;
  const stdout = prestarted?.stdout ?? child.stdout!;
  const stderr = prestarted?.stderr ?? child.stderr!;
  // A prestarted shell's group was tracked when it started.
  if (pid !== undefined && !prestarted) trackGroup(pid);

  let reason: EndReason = "exited";
  let straysKilled = false;
  let killing: Promise<void> | undefined;
  const end = (why: EndReason) => {
    if (killing || pid === undefined) return;
    reason = why;
    killing = killGroup(pid, KILL_GRACE_MS, killHold, options.launcherNames, pidsBefore);
  };

  /** Cleared when a time-out returned before the group died: its kill then does not hold the host open. */
  const killHold = { keepAlive: true };
  /** Set when a time-out returned before the group died: later output goes nowhere. */
  let returned = false;
  let returnEarly: ((outcome: Outcome) => void) | undefined;
  const onTimeout = () => {
    end("timeout");
    setTimeout(() => {
      returned = true;
      // Nothing waits for this process now: a host with nothing else to do may exit, and its exit handler
      // SIGKILLs the group at once.
      clearInterval(poll);
      killHold.keepAlive = false;
      child.unref();
      for (const pipe of [stdout, stderr]) (pipe as { unref?: () => void }).unref?.();
      returnEarly?.({
        reason: "timeout",
        exitCode: null,
        signal: null,
        straysKilled: false,
        stillStopping: true,
      });
    }, TIMEOUT_RETURN_WAIT_MS).unref();
  };
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(onTimeout, options.timeoutMs);
  const poll = options.isWaitingForInput
    ? setInterval(() => {
        if (pid !== undefined && options.isWaitingForInput?.(pid)) end("stalled");
      }, STALL_POLL_MS)
    : undefined;
  const onAbort = () => end("aborted");
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  // Read to the end even after an early return, so a dying process never blocks on a full pipe.
  stdout.on("data", (chunk: Buffer) => returned || options.onStdout(chunk));
  stderr.on("data", (chunk: Buffer) => returned || options.onStderr(chunk));
  if (child.stdin && !prestarted) {
    child.stdin.on("error", () => {});
    child.stdin.end(options.stdin);
  }

  const finished = new Promise<Outcome>((resolve) => {
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let spawnError: string | undefined;
    const finish = async () => {
      clearTimeout(timer);
      clearInterval(poll);
      options.signal?.removeEventListener("abort", onAbort);
      await killing;
      if (pid !== undefined) untrackGroup(pid);
      resolve(
        spawnError !== undefined
          ? { reason: "spawnFailed", exitCode: null, signal: null, straysKilled: false, spawnError }
          : { reason, exitCode, signal: exitSignal, straysKilled },
      );
    };
    child.on("error", (error) => {
      spawnError = errorMessage(error);
      if (pid === undefined) void finish();
    });
    child.on("exit", (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // The shell is gone; anything still in its group, or carrying its marker after leaving the group
      // (setsid), was started by the command and would be orphaned.
      const alreadyKilling = killing;
      killing = (async () => {
        await alreadyKilling;
        if (pid === undefined) return;
        if (groupAlive(pid, options.launcherNames, pidsBefore)) {
          straysKilled = true;
          await killGroup(pid, KILL_GRACE_MS, undefined, options.launcherNames, pidsBefore);
        }
        if (options.contained) return;
        // detached: the command leads its own session, so its pid is also the session id.
        const escaped = await killEscapees(marker, pidsBefore, KILL_GRACE_MS, {
          sessionId: pid,
          ignoreNames: options.launcherNames,
        });
        if (escaped && !alreadyKilling) straysKilled = true;
      })();
      void killing.then(() => {
        setTimeout(() => {
          stdout.destroy();
          stderr.destroy();
        }, PIPE_CLOSE_GRACE_MS).unref();
      });
    });
    child.on("close", () => void finish());
  });
  const done = Promise.race([
    finished,
    new Promise<Outcome>((resolve) => {
      returnEarly = resolve;
    }),
  ]);

  return {
    pid,
    done,
    finished,
    stop() {
      end("stopped");
      return done;
    },
  };
}

/** A command that never started: settled at once with `outcome`. */
function notStarted(outcome: Outcome): Supervised {
  const settled = Promise.resolve(outcome);
  return { pid: undefined, done: settled, finished: settled, stop: () => settled };
}
