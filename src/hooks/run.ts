import type { ToolContext } from "../core/context.js";
import { log } from "../core/log.js";
import type { HookCommand, HookEvent } from "../core/settings.js";
import { runHookCommand } from "./command.js";
import { BLOCKING_EVENTS, type HookPayloads, MATCHED_FIELD, STDOUT_IS_CONTEXT } from "./events.js";

/** What the hooks of one event decided, combined. */
export interface HookOutcome {
  /**
   * Set when a hook blocked: exit code 2 or a "block"/"deny" decision. For PreToolUse the call does not run;
   * for UserPromptSubmit the prompt is dropped; for Stop/SubagentStop the agent goes on, told this reason.
   */
  blocked?: string;
  /** Set when a hook said `continue: false`: the whole turn stops, with this reason for the user. */
  stopped?: string;
  /** PreToolUse: the strictest permission decision of all hooks (deny over ask over allow). */
  permissionDecision?: "allow" | "deny" | "ask";
  permissionReason?: string;
  /** PreToolUse: replacement input (validated again by the executor). */
  updatedInput?: Record<string, unknown>;
  /** Text for the model: PostToolUse feedback, additionalContext, a prompt hook's standard output. */
  feedback: string[];
  /** Messages for the user (`systemMessage`). */
  systemMessages: string[];
}

/** Claude Code matchers: empty or `*` matches everything, otherwise an anchored regex (`Edit|Write`). */
export function hookMatches(matcher: string | undefined, value: string | undefined): boolean {
  if (!matcher || matcher === "*") return true;
  if (value === undefined) return false;
  try {
    return new RegExp(`^(?:${matcher})$`).test(value);
  } catch {
    return matcher === value;
  }
}

interface HookJson {
  continue?: boolean;
  stopReason?: string;
  systemMessage?: string;
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

const RANK = { allow: 0, ask: 1, deny: 2 } as const;

function permissionOf(json: HookJson): "allow" | "deny" | "ask" | undefined {
  const decision = json.hookSpecificOutput?.permissionDecision ?? json.permissionDecision;
  if (decision === "allow" || decision === "deny" || decision === "ask") return decision;
  // The older spelling: approve / block.
  if (json.decision === "approve") return "allow";
  if (json.decision === "block") return "deny";
  return undefined;
}

/** Folds one hook's JSON answer into the outcome. */
function applyJson(json: HookJson, event: HookEvent, outcome: HookOutcome, label: string): void {
  const specific = json.hookSpecificOutput ?? {};
  const reason = specific.permissionDecisionReason ?? json.permissionDecisionReason ?? json.reason;
  if (json.systemMessage) outcome.systemMessages.push(json.systemMessage);
  if (json.continue === false) {
    outcome.stopped ??= json.stopReason ?? reason ?? `stopped by ${label}`;
    // Stopping everything also stops the call or prompt at hand.
    if (event === "PreToolUse" || event === "UserPromptSubmit") outcome.blocked ??= outcome.stopped;
  }
  if (specific.additionalContext) outcome.feedback.push(specific.additionalContext);
  if (event === "PreToolUse") {
    const decision = permissionOf(json);
    if (decision && (!outcome.permissionDecision || RANK[decision] > RANK[outcome.permissionDecision])) {
      outcome.permissionDecision = decision;
      outcome.permissionReason = reason ?? `decided by ${label}`;
    }
    const updated = specific.updatedInput ?? json.updatedInput;
    if (isRecord(updated)) outcome.updatedInput = updated;
    return;
  }
  if (json.decision === "block") {
    const why = reason ?? `${label} flagged this`;
    if (event === "PostToolUse") outcome.feedback.push(why);
    else outcome.blocked ??= why;
  }
}

/** The distinct commands of the matchers that match, in settings order: an identical command runs once. */
function matchingCommands(
  event: HookEvent,
  payload: Record<string, unknown>,
  ctx: ToolContext,
): HookCommand[] {
  const field = MATCHED_FIELD[event] as string | undefined;
  const value = field ? (payload[field] as string | undefined) : undefined;
  const seen = new Set<string>();
  const commands: HookCommand[] = [];
  for (const matcher of ctx.config.hooks[event] ?? []) {
    if (field && !hookMatches(matcher.matcher, value)) continue;
    for (const hook of matcher.hooks) {
      if (hook.type !== "command" || !hook.command || seen.has(hook.command)) continue;
      seen.add(hook.command);
      commands.push(hook);
    }
  }
  return commands;
}

/**
 * Runs every hook of `event` that matches, all at once (as Claude Code does), and combines what they said:
 * any block blocks, the strictest permission decision wins, feedback is kept in settings order.
 */
export async function runHooks<E extends HookEvent>(
  event: E,
  payload: HookPayloads[E],
  ctx: ToolContext,
  signal: AbortSignal,
): Promise<HookOutcome> {
  const outcome: HookOutcome = { feedback: [], systemMessages: [] };
  const fields = payload as unknown as Record<string, unknown>;
  const commands = matchingCommands(event, fields, ctx);
  if (commands.length === 0) return outcome;

  const stdin = JSON.stringify({
    session_id: ctx.sessionId,
    cwd: ctx.workingDir,
    hook_event_name: event,
    permission_mode: ctx.permissionMode,
    ...(ctx.agentType ? { agent_type: ctx.agentType } : {}),
    ...fields,
  });
  const outputs = await Promise.all(commands.map((hook) => runHookCommand(hook, stdin, ctx, signal)));
  for (const [i, out] of outputs.entries()) {
    const label = `${event} hook \`${commands[i]!.command}\``;
    if (out.timedOut) {
      log.warn(`${label} timed out and was stopped`);
      continue;
    }
    if (out.code === 2) {
      const message = out.stderr.trim() || `blocked by ${label}`;
      if (BLOCKING_EVENTS.has(event) && event !== "PostToolUse") outcome.blocked ??= message;
      else if (event === "PostToolUse") outcome.feedback.push(message);
      else log.warn(`${label}: ${message}`);
      continue;
    }
    if (out.code !== 0) {
      log.warn(`${label} failed with exit code ${out.code}: ${out.stderr.trim()}`);
      continue;
    }
    const json = parseJson(out.stdout);
    if (json) applyJson(json, event, outcome, label);
    else if (STDOUT_IS_CONTEXT.has(event) && out.stdout.trim()) outcome.feedback.push(out.stdout.trim());
  }
  return outcome;
}
