import { randomUUID } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Progress, ToolContext } from "../core/context.js";
import { ToolError } from "../core/errors.js";
import { SPILL_HEAD_CHARS, SPILL_TAIL_CHARS } from "../core/limits.js";
import { type RunningTask, type TaskStatus, taskStoreSlot } from "../tasks/store.js";
import { OutputCapture, type OutputSnapshot } from "./capture.js";
import { currentDir, settleDir, startingDir } from "./cwd.js";
import { modelCommandEnv } from "./env.js";
import { groupWaitsForInput } from "./input-wait.js";
import { reportProgressWhileRunning } from "./progress.js";
import { leftInFullScreen, promptLine, STALL_QUIET_MS } from "./prompt.js";
import type { ShellAdapter } from "./shells.js";
import { locateExecutable } from "./shells.js";
import { type Outcome, supervise } from "./supervise.js";

export interface ShellCommand {
  adapter: ShellAdapter;
  command: string;
  ctx: ToolContext;
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
}

/**
 * Longest command passed as an argument. Linux refuses a single argument over 128 KiB (E2BIG); a longer
 * command (a big heredoc) is written to a script file that the shell sources instead.
 */
const MAX_ARGUMENT_COMMAND_BYTES = 100_000;

/**
 * Where the shell is, how to start it, and the command text to hand it; throws when the shell is not
 * installed. `cleanup` removes the script file a long command was written to.
 */
function prepare({ adapter, command, ctx }: ShellCommand) {
  const env = modelCommandEnv(ctx.config.env, ctx.config.envPassthrough);
  const executable = locateExecutable(adapter.executable, env.PATH);
  if (!executable) throw new ToolError(adapter.missingHint, { beforeRun: true });
  if (Buffer.byteLength(command) <= MAX_ARGUMENT_COMMAND_BYTES) {
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
): Promise<ForegroundResult> {
  const { adapter, ctx } = request;
  const { env, executable, start, text, cleanup } = prepare(request);
  const cwdFile = join(ctx.session.dir, `cwd-${randomUUID().slice(0, 8)}`);
  const capture = new OutputCapture({
    inlineChars: options.inlineChars,
    headChars: SPILL_HEAD_CHARS,
    tailChars: SPILL_TAIL_CHARS,
    filePath: () => join(ctx.session.dir, `${adapter.toolName}-${randomUUID().slice(0, 8)}.txt`),
  });
  const write = (chunk: Buffer) => capture.write(chunk);
  const { file, args } = adapter.invocation(executable, text, cwdFile);
  let prompt: string | undefined;
  let fullScreen = false;
  const stopProgress = options.onProgress
    ? reportProgressWhileRunning(capture, options.onProgress)
    : undefined;
  const outcome = await supervise({
    file,
    args,
    cwd: start.dir,
    env,
    onStdout: write,
    onStderr: write,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    isWaitingForInput: (pgid) => {
      if (Date.now() - capture.lastOutputAt < STALL_QUIET_MS) return false;
      const { head, tail } = capture.snapshot();
      // No kernel check here: vim, for one, naps between polls of its empty stdin instead of blocking.
      fullScreen = leftInFullScreen(head + tail);
      if (fullScreen) return true;
      prompt = promptLine(tail);
      // A prompt-like line alone is not enough where the kernel can tell whether the command is reading.
      return prompt !== undefined && (groupWaitsForInput(pgid) ?? true);
    },
  }).done;
  stopProgress?.();
  cleanup();
  capture.finish();
  const notes = start.note ? [start.note] : [];
  const refused = settleDir(ctx, start.dir, readCwdFile(cwdFile));
  if (refused) notes.push(refused);
  const cwd = currentDir(ctx);
  return {
    outcome,
    output: capture.snapshot(),
    cwd,
    notes,
    prompt: outcome.reason === "stalled" ? prompt : undefined,
    fullScreen: outcome.reason === "stalled" && fullScreen,
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
export function startBackground(request: ShellCommand, inlineChars: number): RunningTask {
  const { adapter, command, ctx } = request;
  const { env, executable, start, text, cleanup } = prepare(request);
  const store = ctx.session.get(taskStoreSlot);
  const task = store.add("shell", command, (id) => {
    const capture = new OutputCapture({
      inlineChars,
      headChars: SPILL_HEAD_CHARS,
      tailChars: SPILL_TAIL_CHARS,
      filePath: () => join(ctx.session.dir, `${id}.output`),
      eagerFile: true,
    });
    const write = (chunk: Buffer) => capture.write(chunk);
    const { file, args } = adapter.invocation(executable, text, undefined);
    const supervised = supervise({ file, args, cwd: start.dir, env, onStdout: write, onStderr: write });
    const settled = supervised.done.then((outcome) => {
      cleanup();
      capture.finish();
      const self = store.get(id)!;
      self.status = finalStatus(outcome);
      self.exitCode = outcome.exitCode;
      self.endedAt = Date.now();
    });
    return {
      outputFile: capture.file!,
      output: () => capture.snapshot(),
      settled,
      stop: async () => {
        await supervised.stop();
        await settled;
      },
    };
  });
  return task as RunningTask;
}
