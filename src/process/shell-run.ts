import { randomUUID } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Progress, ToolContext } from "../core/context.js";
import { ToolError } from "../core/errors.js";
import { SPILL_HEAD_CHARS, SPILL_TAIL_CHARS } from "../core/limits.js";
import { log } from "../core/log.js";
import { type Launch, newLaunchId, sandboxAhead, sandboxLaunch } from "../sandbox/launch.js";
import { type RunningTask, type TaskStatus, taskStoreSlot } from "../tasks/store.js";
import { OutputCapture, type OutputSnapshot } from "./capture.js";
import { currentDir, settleDir, startingDir } from "./cwd.js";
import { modelCommandEnv } from "./env.js";
import { groupWaitsForInput } from "./input-wait.js";
import { type PrestartedShell, prestartFor as prestartShellFor, takePrestarted } from "./prestart.js";
import { reportProgressWhileRunning } from "./progress.js";
import { leftInFullScreen, promptLine, STALL_CONFIRMATIONS, STALL_QUIET_MS } from "./prompt.js";
import type { ShellAdapter } from "./shells.js";
import { hostProgram } from "./shells.js";
import { type Outcome, supervise } from "./supervise.js";

export interface ShellCommand {
  adapter: ShellAdapter;
  command: string;
  ctx: ToolContext;
  /** The call's `dangerouslyDisableSandbox`: honoured only as the sandbox settings allow. */
  disableSandbox?: boolean;
}

export interface ForegroundOptions {
  timeoutMs: number;
  /** Output longer than this is spilled to a file; the snapshot then holds head and tail. */
  inlineChars: number;
  signal: AbortSignal;
  /** Called every few seconds while the command runs, with its elapsed time and last line of output. */
  onProgress?: (progress: Progress) => void;
}

export interface ForegroundResult {
  outcome: Outcome;
  output: OutputSnapshot;
  /** The directory the shell is in after the command. */
  cwd: string;
  /** Things the model should know about the directory (reset, refused cd). */
  notes: string[];
  /** The line that looked like a prompt, when the command was stopped as waiting for input. */
  prompt?: string;
  /** True when the command was stopped as a full-screen program waiting for keys. */
  fullScreen?: boolean;
  /** True when the command ran inside the OS sandbox. */
  sandboxed: boolean;
}

/**
 * Longest argument a command's invocation may hold, the command's quoting included. Linux refuses a single
 * argument over 128 KiB (E2BIG); a longer command (a big heredoc) is written to a script file that the
 * shell sources instead.
 */
const MAX_ARGUMENT_COMMAND_BYTES = 100_000;

/**
 * Where the shell is, how to start it, and the command text to hand it; throws when the shell is not
 * installed. `cleanup` removes the script file a long command was written to.
 */
function prepare({ adapter, command, ctx }: ShellCommand) {
  const env = modelCommandEnv(ctx.config.env, ctx.config.envPassthrough);
  // Outside the sandbox (a command the user let out) it runs with the user's rights: see host-programs.ts.
  const executable = hostProgram(adapter.executable, env.PATH);
  if (!executable) throw new ToolError(adapter.missingHint, { beforeRun: true });
  const { args } = adapter.invocation(executable, command, undefined);
  if (args.every((arg) => Buffer.byteLength(arg) <= MAX_ARGUMENT_COMMAND_BYTES)) {
    return { env, executable, start: startingDir(ctx), text: command, cleanup: () => {} };
  }
  const script = join(ctx.session.dir, `command-${randomUUID().slice(0, 8)}${adapter.scriptExtension}`);
  writeFileSync(script, command);
  return {
    env,
    executable,
    start: startingDir(ctx),
    text: adapter.sourceCommand(script),
    cleanup: () => rmSync(script, { force: true }),
  };
}

/**
 * A launch, with the session's prestarted shell it took (bash only), which runs it if it fits; `release`
 * also kills that shell if no command took it (it may have exec'd the command's shell early, at its gate).
 */
interface Launched extends Launch {
  prestarted?: PrestartedShell;
}

/**
 * The spawn of a prepared command: inside the OS sandbox when it applies (the same path for the tools,
 * sub-agents and background tasks). The script file of a long command is removed if the sandbox refuses.
 * A sandbox waiting for the command starts the command's shell at once, at its gate, while the launch is
 * judged (PrestartedShell.startEarly).
 */
async function launch(
  request: ShellCommand,
  prepared: ReturnType<typeof prepare>,
  cwdFile: string | undefined,
): Promise<Launched> {
  const { adapter, ctx } = request;
  const { file, args } = adapter.invocation(prepared.executable, prepared.text, cwdFile);
  const asInit = adapter.invocationAsInit?.bind(adapter, prepared.executable, prepared.text, cwdFile);
  const spec = { file, args, cwd: prepared.start.dir, env: prepared.env, asInit };
  const prestarted = adapter.kind === "bash" ? takePrestarted(ctx.session) : undefined;
  const id = newLaunchId();
  try {
    prestarted?.startEarly(spec, id);
    const launched = await sandboxLaunch(
      ctx,
      spec,
      { command: request.command, shell: adapter.kind, disableSandbox: request.disableSandbox },
      id,
    );
    // A sandbox that waits without the stand-ins this launch binds gets them now.
    if (launched.contained) await prestarted?.mountStandIns(launched);
    const release = async () => {
      prestarted?.discard();
      await launched.release();
    };
    return { ...launched, prestarted, release };
  } catch (error) {
    // (The next command spawns, and starts the session's next shell ahead after it.)
    prestarted?.discard();
    prepared.cleanup();
    throw error;
  }
}

/**
 * What supervise needs of a launch: its argv, and the session's prestarted shell that launch took (a bash
 * command's), which execs the argv when it fits: the same bash that would have been spawned.
 */
function spawnOf({ file, args, cwd, env, gated, launcherNames, contained, prestarted }: Launched) {
  return { file, args, cwd, env, gated, launcherNames, contained, prestarted };
}

/**
 * Starts the session's next bash ahead of its command (bash only: the waiting shell is a bash); after a
 * command that ran in bubblewrap, inside the sandbox the next one would get, where it can be started ahead.
 */
function prestartFor({ adapter, ctx }: ShellCommand, launched: Launch): void {
  if (adapter.kind !== "bash") return;
  prestartShellFor(ctx, launched.contained ? () => sandboxAhead(ctx) : undefined);
}

function readCwdFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(path, { force: true });
  }
}

/** Runs a command to completion (or time-out, stall, abort) and records where it left the shell. */
export async function runForeground(
  request: ShellCommand,
  options: ForegroundOptions,
  attempt = 1,
): Promise<ForegroundResult> {
  const { adapter, ctx } = request;
  const prepared = prepare(request);
  const { start, cleanup } = prepared;
  const cwdFile = join(ctx.session.dir, `cwd-${randomUUID().slice(0, 8)}`);
  const spawned = await launch(request, prepared, cwdFile);
  const capture = new OutputCapture({
    inlineChars: options.inlineChars,
    headChars: SPILL_HEAD_CHARS,
    tailChars: SPILL_TAIL_CHARS,
    filePath: () => join(ctx.session.dir, `${adapter.toolName}-${randomUUID().slice(0, 8)}.txt`),
  });
  const write = (chunk: Buffer) => capture.write(chunk);
  let prompt: string | undefined;
  let fullScreen = false;
  let waitingPolls = 0;
  const stopProgress = options.onProgress
    ? reportProgressWhileRunning(capture, options.onProgress)
    : undefined;
  const supervised = await supervise({
    ...spawnOf(spawned),
    onStdout: write,
    onStderr: write,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    isWaitingForInput: (pgid) => {
      if (Date.now() - capture.lastOutputAt < STALL_QUIET_MS) {
        waitingPolls = 0;
        return false;
      }
      const { head, tail } = capture.snapshot();
      // No kernel check here: vim, for one, naps between polls of its empty stdin instead of blocking.
      fullScreen = leftInFullScreen(head + tail);
      if (fullScreen) return true;
      prompt = promptLine(tail);
      // A prompt-like line alone is not enough where the kernel can tell whether the command is reading.
      const waiting = prompt !== undefined && (groupWaitsForInput(pgid, spawned.launcherNames) ?? true);
      waitingPolls = waiting ? waitingPolls + 1 : 0;
      return waitingPolls >= STALL_CONFIRMATIONS;
    },
  }).done;
  stopProgress?.();
  await spawned.release();
  // Strays inside the sandbox die with its PID namespace before the supervisor could see them.
  const outcome = { ...supervised, straysKilled: supervised.straysKilled || spawned.leftStrays() };
  cleanup();
  capture.finish();
  const output = capture.snapshot();
  // bwrap refused to set up (a mount point vanished between the policy and the mount: a socket, a
  // placeholder another session removed); the command never started, so a second try is safe.
  if (attempt === 1 && spawned.setupFailed(output.whole ?? output.head, outcome.exitCode)) {
    readCwdFile(cwdFile);
    return runForeground(request, options, attempt + 1);
  }
  const notes = start.note ? [start.note] : [];
  notes.push(...spawned.explain(output.whole ?? `${output.head}\n${output.tail}`, outcome.exitCode));
  const refused = settleDir(ctx, start.dir, readCwdFile(cwdFile));
  if (refused) notes.push(refused);
  const cwd = currentDir(ctx);
  prestartFor(request, spawned);
  return {
    outcome,
    output,
    cwd,
    notes,
    prompt: outcome.reason === "stalled" ? prompt : undefined,
    fullScreen: outcome.reason === "stalled" && fullScreen,
    sandboxed: spawned.sandboxed,
  };
}

function finalStatus(outcome: Outcome): TaskStatus {
  if (outcome.reason === "stopped") return "killed";
  return outcome.reason === "exited" && outcome.exitCode === 0 ? "completed" : "failed";
}

/**
 * Starts a command as a task of the session: no time limit, output to a file from the first byte, killed
 * by TaskStop or when the session ends. Directory changes it makes do not persist. Output up to
 * `inlineChars` is read back whole; past it, as head and tail with the file's path.
 */
export async function startBackground(request: ShellCommand, inlineChars: number): Promise<RunningTask> {
  const { command, ctx } = request;
  const prepared = prepare(request);
  let spawned = await launch(request, prepared, undefined);
  const { cleanup } = prepared;
  const store = ctx.session.get(taskStoreSlot);
  const task = store.add("shell", command, (id) => {
    let capture: OutputCapture;
    try {
      capture = new OutputCapture({
        inlineChars,
        headChars: SPILL_HEAD_CHARS,
        tailChars: SPILL_TAIL_CHARS,
        filePath: () => join(ctx.session.dir, `${id}.output`),
        eagerFile: true,
      });
    } catch (error) {
      // The output file could not be made, so nothing ran: what the launch set up goes now.
      spawned.release().catch((failure: unknown) => log.debug("a launch's release failed", failure));
      cleanup();
      throw error;
    }
    const write = (chunk: Buffer) => capture.write(chunk);
    const note = (text: string) => write(Buffer.from(`\n${text}\n`));
    const run = () => supervise({ ...spawnOf(spawned), onStdout: write, onStderr: write });
    let supervised = run();
    let stopped = false;
    const settle = async (): Promise<Outcome> => {
      const first = await supervised.done;
      await spawned.release();
      const { whole, head } = capture.snapshot();
      if (!spawned.setupFailed(whole ?? head, first.exitCode)) return first;
      const stoppedMeanwhile: Outcome = { ...first, reason: "stopped", exitCode: null };
      if (stopped) return stoppedMeanwhile;
      // As runForeground does: bwrap refused to set up, so the command never ran and one more start is
      // safe. Its output file is emptied of bwrap's line only once the second start is under way.
      let again: Launched;
      try {
        again = await launch(request, prepared, undefined);
      } catch (error) {
        // The sandbox cannot be set up at all any more (say the settings require it, and it is gone).
        note((error as Error).message);
        return first;
      }
      if (stopped) {
        await again.release();
        return stoppedMeanwhile;
      }
      spawned = again;
      try {
        capture.restart();
      } catch (error) {
        await again.release();
        throw error;
      }
      supervised = run();
      const second = await supervised.done;
      await spawned.release();
      return second;
    };
    const settled = settle()
      .catch((error: unknown): Outcome => {
        // A task always ends: one that could not finish its own bookkeeping ends as failed, saying why.
        const message = error instanceof Error ? error.message : String(error);
        try {
          note(message);
        } catch {
          // The output file itself is what failed.
        }
        return {
          reason: "spawnFailed",
          exitCode: null,
          signal: null,
          straysKilled: false,
          spawnError: message,
        };
      })
      .then((outcome) => {
        const self = store.get(id)!;
        self.status = finalStatus(outcome);
        self.exitCode = outcome.exitCode;
        self.endedAt = Date.now();
        // The task has ended whatever happens below: settled never rejects.
        try {
          capture.finish();
          cleanup();
        } catch {
          // Closing the output file or removing the script file failed: nothing left to tell anyone.
        }
      });
    return {
      outputFile: capture.file!,
      output: () => capture.snapshot(),
      settled,
      stop: async () => {
        stopped = true;
        await supervised.stop();
        await settled;
      },
    };
  });
  prestartFor(request, spawned);
  return task as RunningTask;
}
