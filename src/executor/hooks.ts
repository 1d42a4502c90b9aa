import type { ToolContext } from "../core/context.js";
import { HOOK_DEFAULT_TIMEOUT_MS, HOOK_MAX_OUTPUT_CHARS } from "../core/limits.js";
import { log } from "../core/log.js";
import { childEnv } from "../process/env.js";
import { supervise } from "../process/supervise.js";
import { sandboxLaunch } from "../sandbox/launch.js";
import type { HookCommand, HookEvent, HookMatcher } from "../settings/types.js";

/** What the hooks of one event decided about a call. */
export interface HookOutcome {
  /** Set when a hook blocked the call (exit code 2, or a deny decision): shown to the model. */
  blocked?: string;
  /** PreToolUse: a hook's permission decision, which replaces the rule check. */
  permissionDecision?: "allow" | "deny" | "ask";
  permissionReason?: string;
  /** PreToolUse: replacement input (validated again by the executor). */
  updatedInput?: Record<string, unknown>;
  /** PostToolUse: extra text for the model (a hook's feedback). */
  feedback: string[];
}

export interface HookPayload {
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
  tool_response?: unknown;
}

/** Claude Code matchers: empty or `*` matches every tool, otherwise an anchored regex (`Edit|Write`). */
export function hookMatches(matcher: string | undefined, toolName: string): boolean {
  if (!matcher || matcher === "*") return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(toolName);
  } catch {
    return matcher === toolName;
  }
}

interface CommandOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs through the process supervisor, so a hook's processes die with it on time-out, abort or host exit. */
async function runHookCommand(
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
  try {
    launch = await sandboxLaunch(
      ctx,
      {
        file: "bash",
        args: ["-c", hook.command],
        cwd: ctx.workingDir,
        env: { ...childEnv(ctx.config.env), CLAUDE_PROJECT_DIR: ctx.config.projectDir },
      },
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

interface HookJson {
  continue?: boolean;
  stopReason?: string;
  decision?: string;
  reason?: string;
  permissionDecision?: string;
  permissionDecisionReason?: string;
  updatedInput?: unknown;
  hookSpecificOutput?: {
    permissionDecision?: string;
    permissionDecisionReason?: string;
    updatedInput?: unknown;
    additionalContext?: string;
  };
}

function parseJson(stdout: string): HookJson | undefined {
  const text = stdout.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    return JSON.parse(text) as HookJson;
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Applies one hook's JSON output to the outcome; returns false when the hook stops the call. */
function applyJson(json: HookJson, event: HookEvent, outcome: HookOutcome, label: string): void {
  const specific = json.hookSpecificOutput ?? {};
  const decision = specific.permissionDecision ?? json.permissionDecision;
  const reason = specific.permissionDecisionReason ?? json.permissionDecisionReason ?? json.reason;
  const updated = specific.updatedInput ?? json.updatedInput;
  if (json.continue === false) {
    outcome.blocked = json.stopReason ?? reason ?? `stopped by ${label}`;
    return;
  }
  if (event === "PreToolUse") {
    const normalized =
      decision === "allow" || decision === "deny" || decision === "ask"
        ? decision
        : json.decision === "approve"
          ? "allow"
          : json.decision === "block"
            ? "deny"
            : undefined;
    if (normalized) {
      // The strictest decision of all hooks wins.
      const rank = { allow: 0, ask: 1, deny: 2 } as const;
      if (!outcome.permissionDecision || rank[normalized] > rank[outcome.permissionDecision]) {
        outcome.permissionDecision = normalized;
        outcome.permissionReason = reason ?? `decided by ${label}`;
      }
    }
    if (isRecord(updated)) outcome.updatedInput = updated;
  } else {
    if (json.decision === "block") outcome.feedback.push(reason ?? `${label} flagged this result`);
    if (specific.additionalContext) outcome.feedback.push(specific.additionalContext);
  }
}

/** Runs every hook of `event` whose matcher matches the tool, in settings order. */
export async function runHooks(
  event: HookEvent,
  payload: HookPayload,
  ctx: ToolContext,
  signal: AbortSignal,
): Promise<HookOutcome> {
  const outcome: HookOutcome = { feedback: [] };
  const matchers: HookMatcher[] = ctx.config.hooks[event] ?? [];
  const commands = matchers.filter((m) => hookMatches(m.matcher, payload.tool_name)).flatMap((m) => m.hooks);
  if (commands.length === 0) return outcome;

  const stdin = JSON.stringify({
    session_id: ctx.sessionId,
    cwd: ctx.workingDir,
    hook_event_name: event,
    permission_mode: ctx.permissionMode,
    ...payload,
  });
  for (const hook of commands) {
    if (hook.type !== "command" || !hook.command) continue;
    const label = `${event} hook \`${hook.command}\``;
    const out = await runHookCommand(hook, stdin, ctx, signal);
    if (out.timedOut) {
      log.warn(`${label} timed out and was stopped`);
      continue;
    }
    if (out.code === 2) {
      const message = out.stderr.trim() || `blocked by ${label}`;
      if (event === "PreToolUse") {
        outcome.blocked = message;
        return outcome;
      }
      outcome.feedback.push(message);
      continue;
    }
    if (out.code !== 0) {
      log.warn(`${label} failed with exit code ${out.code}: ${out.stderr.trim()}`);
      continue;
    }
    const json = parseJson(out.stdout);
    if (json) applyJson(json, event, outcome, label);
    if (outcome.blocked) return outcome;
  }
  return outcome;
}
