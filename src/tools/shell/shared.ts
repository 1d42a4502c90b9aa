import * as z from "zod";
import type { ToolCallContext, ToolContext } from "../../core/context.js";
import { formatDuration } from "../../core/duration.js";
import { configuredPositiveInt } from "../../core/env.js";
import { InputError } from "../../core/errors.js";
import { TOOL_CALL_DEADLINE_MS } from "../../core/limits.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { currentDir } from "../../process/cwd.js";
import { STALL_QUIET_MS } from "../../process/prompt.js";
import { renderOutput } from "../../process/render.js";
import { type ForegroundResult, runForeground, startBackground } from "../../process/shell-run.js";
import { type ShellAdapter, toolUnavailable } from "../../process/shells.js";
import { endedTaskNotices } from "../tasks/notices.js";

/** Claude Code's defaults, overridable by BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, BASH_MAX_OUTPUT_LENGTH. */
export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
/** BASH_MAX_OUTPUT_LENGTH is capped here, so one result never floods the model's context. */
export const MAX_OUTPUT_CHARS_CEILING = 150_000;
/**
 * A command's own time-out must fire before the executor's deadline for any call, so a large
 * BASH_MAX_TIMEOUT_MS still ends in our time-out result (output so far, processes killed) rather than a bare cancel.
 */
const DEADLINE_MARGIN_MS = 30_000;
/** Room for the exit code line and notes around the output, so the executor never spills a second time. */
const RESULT_OVERHEAD_CHARS = 4_000;

export const shellInputSchema = z.strictObject({
  command: z.string().describe("The command to run."),
  timeout: z
    .number()
    .positive()
    .optional()
    .describe(`Time limit in milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}).`),
  description: z
    .string()
    .optional()
    .describe("A few words saying what the command does, shown to the user (e.g. 'Run the unit tests')."),
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      "Start the command and return its task id at once; read it with TaskOutput, stop it with TaskStop.",
    ),
  dangerouslyDisableSandbox: z
    .boolean()
    .optional()
    .describe(
      "Run this command outside the OS sandbox. It then needs approval under the permission rules like any unsandboxed command; the sandbox settings may not allow it.",
    ),
});

type ShellInput = z.output<typeof shellInputSchema>;

interface ShellLimits {
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxOutputChars: number;
}

/** A positive integer from the settings' env, else the host's env, else the default. */
export function shellLimits(ctx: ToolContext): ShellLimits {
  const maxTimeoutMs = Math.min(
    configuredPositiveInt(ctx, "BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS),
    TOOL_CALL_DEADLINE_MS - DEADLINE_MARGIN_MS,
  );
  return {
    maxTimeoutMs,
    defaultTimeoutMs: Math.min(
      configuredPositiveInt(ctx, "BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
      maxTimeoutMs,
    ),
    maxOutputChars: Math.min(
      configuredPositiveInt(ctx, "BASH_MAX_OUTPUT_LENGTH", DEFAULT_MAX_OUTPUT_CHARS),
      MAX_OUTPUT_CHARS_CEILING,
    ),
  };
}

function body(output: string): string {
  return output === "" ? "It printed nothing." : `Output so far:\n${output}`;
}

/** The result's text and whether it is an error, from how the command ended. */
function describeEnd(adapter: ShellAdapter, run: ForegroundResult, timeoutMs: number) {
  const output = renderOutput(run.output);
  const { outcome } = run;
  switch (outcome.reason) {
    case "timeout":
      return {
        isError: true,
        text:
          `The command timed out after ${formatDuration(timeoutMs)} and was stopped with every process it started. ` +
          `For a long-running command, call ${adapter.toolName} with run_in_background: true and follow it ` +
          `with TaskOutput, or pass a larger timeout.\n\n${body(output)}`,
      };
    case "stalled":
      if (run.fullScreen) {
        return {
          isError: true,
          text:
            `The command was stopped: it opened a full-screen program (an editor, pager or other terminal UI) ` +
            `that waits for keys, and nothing can be typed in here. Edit files with Edit or Write, read them ` +
            `with Read, and pass non-interactive flags (e.g. git commit -m, --no-pager, top -b -n 1).\n\n${body(output)}`,
        };
      }
      return {
        isError: true,
        text:
          `The command was stopped: it printed nothing for ${formatDuration(STALL_QUIET_MS)} and its last line looks ` +
          `like a prompt waiting for an answer ("${run.prompt}"). Commands get no input here (stdin is empty). ` +
          "Run it non-interactively: pass its yes/force/no-input flag (e.g. -y, --yes, --no-input), give the value " +
          `as an option or environment variable, or pipe the answer in (printf 'y\\n' | command).\n\n${body(output)}`,
      };
    case "aborted":
    case "stopped":
      return { isError: true, text: `The command was cancelled and stopped. ${body(output)}` };
    case "spawnFailed":
      return { isError: true, text: `${adapter.toolName} could not start: ${outcome.spawnError}` };
    case "exited":
      if (outcome.exitCode === 0)
        return { isError: false, text: output || "The command succeeded with no output." };
      return {
        isError: true,
        text:
          outcome.exitCode === null
            ? `The command was killed by ${outcome.signal}.${output ? `\n${output}` : ""}`
            : `Exit code ${outcome.exitCode}${output ? `\n${output}` : ""}`,
      };
  }
}

async function runInForeground(adapter: ShellAdapter, input: ShellInput, ctx: ToolCallContext) {
  const limits = shellLimits(ctx);
  const timeoutMs = Math.min(input.timeout ?? limits.defaultTimeoutMs, limits.maxTimeoutMs);
  const notes: string[] = [];
  if (input.timeout !== undefined && input.timeout > limits.maxTimeoutMs) {
    notes.push(
      `The requested timeout of ${formatDuration(input.timeout)} is above the maximum of ${formatDuration(limits.maxTimeoutMs)} ` +
        "(BASH_MAX_TIMEOUT_MS sets it), so the maximum was used. Use run_in_background: true for longer work.",
    );
  }
  const run = await runForeground(
    { adapter, command: input.command, ctx, disableSandbox: input.dangerouslyDisableSandbox },
    {
      timeoutMs,
      inlineChars: limits.maxOutputChars,
      signal: ctx.signal,
      onProgress: (progress) => ctx.reportProgress(progress),
    },
  );
  const { isError, text } = describeEnd(adapter, run, timeoutMs);
  notes.push(...run.notes, ...endedTaskNotices(ctx));
  if (run.outcome.straysKilled) {
    notes.push(
      "Processes the command left running were stopped when it finished; start long-running processes " +
        "with run_in_background: true.",
    );
  }
  const full = notes.length > 0 ? `${text}\n\n${notes.join("\n")}` : text;
  const metadata = {
    exitCode: run.outcome.exitCode,
    endedBy: run.outcome.reason,
    cwd: run.cwd,
    sandboxed: run.sandboxed,
    ...(run.output.file ? { spilledTo: run.output.file, fullLength: run.output.totalChars } : {}),
  };
  return isError ? ToolResult.error(full, metadata) : ToolResult.success(full, metadata);
}

async function runInBackground(adapter: ShellAdapter, input: ShellInput, ctx: ToolCallContext) {
  const task = await startBackground(
    { adapter, command: input.command, ctx, disableSandbox: input.dangerouslyDisableSandbox },
    shellLimits(ctx).maxOutputChars,
  );
  const text =
    `The command is running in the background as task ${task.id}; its output goes to ${task.run.outputFile}. ` +
    `Read it with TaskOutput (task_id "${task.id}") and stop it with TaskStop.`;
  const notices = endedTaskNotices(ctx);
  return ToolResult.success(notices.length > 0 ? `${text}\n\n${notices.join("\n")}` : text, {
    taskId: task.id,
    outputFile: task.run.outputFile,
  });
}

/** Bash and PowerShell are one tool over different shells: same input, same results, same supervision. */
export function defineShellTool(adapter: ShellAdapter, description: string) {
  return defineTool({
    name: adapter.toolName,
    description,
    permissionLevel: PermissionLevel.Execute,
    inputSchema: shellInputSchema,
    maxResultChars: MAX_OUTPUT_CHARS_CEILING + RESULT_OVERHEAD_CHARS,
    // Commands share the session's working directory and may touch anything: never run two at once.
    isConcurrencySafe: () => false,
    // Offered only where its shell is installed (pwsh is often missing on Linux and macOS).
    unavailableReason: () => toolUnavailable(adapter.toolName),
    permissionSubject: (input, ctx) => ({
      kind: "command",
      command: input.command,
      shell: adapter.kind,
      cwd: currentDir(ctx),
    }),
    async execute(input, ctx) {
      if (input.command.trim() === "") throw new InputError("command is empty; pass the command to run.");
      return input.run_in_background
        ? runInBackground(adapter, input, ctx)
        : runInForeground(adapter, input, ctx);
    },
  });
}
