import type { ToolContext } from "../core/context.js";
import { HOOK_DEFAULT_TIMEOUT_MS, HOOK_MAX_OUTPUT_CHARS } from "../core/limits.js";
import type { HookCommand } from "../core/settings.js";
import { childEnv } from "../process/env.js";
import { hostProgram } from "../process/shells.js";
import { supervise } from "../process/supervise.js";
import { sandboxLaunch } from "../sandbox/launch.js";

export interface CommandOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs one hook command through the process supervisor, so its processes die with it on time-out, abort or
 * host exit. Hooks are the user's own commands: they get the user's environment and the project dir.
 */
export async function runHookCommand(
  hook: HookCommand,
  stdin: string,
  ctx: ToolContext,
  signal: AbortSignal,
): Promise<CommandOutput> {
  const timeoutMs = hook.timeout !== undefined ? hook.timeout * 1000 : HOOK_DEFAULT_TIMEOUT_MS;
  let stdout = "";
  let stderr = "";
  // Hooks are the user's own commands: inside the sandbox only with sandbox.sandboxHooks.
  let launch: Awaited<ReturnType<typeof sandboxLaunch>>;
  const env: NodeJS.ProcessEnv = { ...childEnv(ctx.config.env), CLAUDE_PROJECT_DIR: ctx.config.projectDir };
  // Outside the sandbox, so never a bash a sandboxed command could have put on the PATH.
  const bash = hostProgram("bash", env.PATH);
  if (!bash) {
    return {
      code: null,
      stdout,
      stderr: "The hook was not run: bash was not found on PATH.",
      timedOut: false,
    };
  }
  try {
    launch = await sandboxLaunch(
      ctx,
      { file: bash, args: ["-c", hook.command], cwd: ctx.workingDir, env },
      "hook",
    );
  } catch (error) {
    return { code: null, stdout, stderr: (error as Error).message, timedOut: false };
  }
  const outcome = await supervise({
    file: launch.file,
    args: launch.args,
    cwd: ctx.workingDir,
    env: launch.env,
    launcherNames: launch.launcherNames,
    contained: launch.contained,
    stdin,
    onStdout: (d) => {
      if (stdout.length < HOOK_MAX_OUTPUT_CHARS) stdout += d.toString("utf8");
    },
    onStderr: (d) => {
      if (stderr.length < HOOK_MAX_OUTPUT_CHARS) stderr += d.toString("utf8");
    },
    timeoutMs,
    signal,
  }).done;
  await launch.release();
  if (outcome.spawnError) stderr += outcome.spawnError;
  return { code: outcome.exitCode, stdout, stderr, timedOut: outcome.reason === "timeout" };
}
