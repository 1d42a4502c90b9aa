import { callContext, type Progress, type ToolCallContext, type ToolContext } from "../core/context.js";
import { formatDuration } from "../core/duration.js";
import { errorMessage, ToolError } from "../core/errors.js";
import { CANCEL_GRACE_MS, TOOL_CALL_DEADLINE_MS } from "../core/limits.js";
import { log } from "../core/log.js";
import { ToolResult } from "../core/result.js";
import type { AnyTool } from "../core/tool.js";
import { unavailableReason } from "../core/toolset.js";
import { runHooks } from "../hooks/run.js";
import type { PermissionDecision } from "../permissions/types.js";
import { callEnded, callStarted } from "../process/memory.js";
import { closestToolNames, findTool, toolsFor } from "../registry.js";
import { validateInput } from "../schema/validate.js";
import { applyResultBudget } from "./budget.js";

export interface RunOptions {
  /** Aborts the call (client cancellation, Ctrl-C); the tool stops its processes. */
  signal?: AbortSignal;
  /** The model's tool_use id, passed to hooks. */
  toolUseId?: string;
  onProgress?: (progress: Progress) => void;
  /** Overrides TOOL_CALL_DEADLINE_MS for this call. */
  deadlineMs?: number;
}

let callCounter = 0;

/** For an `mcp__<server>__...` name: why that server offers no tools, when it is not connected. */
function mcpServerNote(name: string, ctx: ToolContext): string {
  const server = /^mcp__(.+?)__/.exec(name)?.[1];
  if (!server) return "";
  const status = ctx.mcpManager?.servers().find((s) => s.name === server);
  if (!status)
    return ` No MCP server named "${server}" is configured (see .mcp.json or settings mcpServers).`;
  if (status.status === "connected") return "";
  return ` MCP server ${server} is not connected (${status.status})${status.error ? `: ${status.error}` : ""}. Check it with 'cc-tools mcp-servers'.`;
}

function unknownTool(name: string, ctx: ToolContext): ToolResult {
  const names = toolsFor(ctx).map((t) => t.name);
  const close = closestToolNames(name, names);
  const hint = close.length > 0 ? ` Did you mean ${close.join(", ")}?` : "";
  return ToolResult.rejected(
    `No tool named "${name}".${mcpServerNote(name, ctx)}${hint} Tool names are case-sensitive; available tools: ${names.join(", ")}.`,
    { unknownTool: true },
  );
}

/** What `promise` resolved to, if it settles within `ms` ({} when it rejected); undefined on time-out. */
function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<{ value?: unknown } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  const settled = promise.then(
    (value) => ({ value }),
    () => ({}),
  );
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `execute` under the call's abort signal and deadline; a throw or a time-out becomes a result. */
async function executeBounded(
  tool: AnyTool,
  input: unknown,
  call: ToolCallContext,
  deadlineMs: number,
  controller: AbortController,
) {
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<ToolResult>((resolve) => {
    const onAbort = () =>
      resolve(
        ToolResult.error(
          controller.signal.reason === "deadline"
            ? `${tool.name} was stopped after ${formatDuration(deadlineMs)}, the longest a call may run.`
            : `${tool.name} was cancelled before it finished.`,
          { cancelled: true },
        ),
      );
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(() => controller.abort("deadline"), deadlineMs);
  });
  try {
    const running = tool.execute(input, call);
    let result: unknown = await Promise.race([running, stopped]);
    if (controller.signal.aborted) {
      // Give the tool its grace to stop; if it ends with a result of its own (what it did, output so far),
      // that says more than "cancelled". If it does not stop in time, the change may still happen.
      const outcome = await outcomeWithin(running, CANCEL_GRACE_MS);
      const own = outcome?.value;
      if (ToolResult.isValid(own) && own.isError) {
        // The tool's own account of stopping (a shell's output so far) says more than "cancelled".
        result = ToolResult.withMetadata(own, { cancelled: true });
      } else if (ToolResult.isValid(result)) {
        const note = !outcome
          ? " It had not stopped after the grace period and may still take effect; check before retrying."
          : ToolResult.isValid(own)
            ? " It had already finished, so what it did took effect."
            : "";
        result = { ...result, content: [{ type: "text", text: ToolResult.text(result) + note }] };
      }
    }
    if (ToolResult.isValid(result)) return result;
    log.error(`${tool.name} returned a malformed result`, result);
    return ToolResult.error(
      `${tool.name} finished but returned no valid result (a tool must return {content: [text or image blocks], isError}); ` +
        "this is a bug in the tool: report it, and check whether the call took effect before retrying.",
    );
  } catch (error) {
    if (error instanceof ToolError) {
      return error.beforeRun
        ? ToolResult.rejected(error.message, error.metadata)
        : ToolResult.error(error.message, error.metadata);
    }
    log.error(`${tool.name} threw an unexpected error`, error);
    return ToolResult.error(`${tool.name} failed unexpectedly: ${errorMessage(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The one pipeline every call goes through, whoever makes it:
 * lookup → validate → PreToolUse hooks → permission → execute → result budget → PostToolUse hooks.
 * It never throws.
 */
export async function runTool(
  name: string,
  rawInput: unknown,
  ctx: ToolContext,
  options: RunOptions = {},
): Promise<ToolResult> {
  // A host that turned on idle collection (the MCP server, the agent) collects a large call's garbage
  // once no call runs; for everyone else this only counts.
  callStarted();
  try {
    return await runPipeline(name, rawInput, ctx, options);
  } catch (error) {
    log.error(`the executor failed on ${name}`, error);
    return ToolResult.error(`${name} could not be run: ${errorMessage(error)}`);
  } finally {
    callEnded();
  }
}

async function runPipeline(
  name: string,
  rawInput: unknown,
  ctx: ToolContext,
  options: RunOptions,
): Promise<ToolResult> {
  const tool = findTool(name, ctx);
  if (!tool) return unknownTool(name, ctx);
  // Only reachable by a caller that ignored the tool list: the model was never offered it here.
  const unavailable = unavailableReason(tool, ctx.host);
  if (unavailable) return ToolResult.rejected(`${tool.name} is not available here: ${unavailable}.`);

  let validation = validateInput(tool, rawInput);
  if (!validation.ok) return ToolResult.rejected(validation.message);
  let input = validation.value;
  // Cancelled before it started (while queued, say): nothing may run, not even hooks.
  if (options.signal?.aborted) {
    return ToolResult.error(`${tool.name} was cancelled before it started; nothing was done.`, {
      cancelled: true,
    });
  }

  const controller = new AbortController();
  const outer = options.signal;
  const forwardAbort = () => controller.abort(outer?.reason ?? "cancelled");
  if (outer?.aborted) forwardAbort();
  outer?.addEventListener("abort", forwardAbort, { once: true });
  const toolUseId = options.toolUseId ?? `call_${Date.now().toString(36)}_${(callCounter++).toString(36)}`;

  try {
    const pre = await runHooks(
      "PreToolUse",
      { tool_name: tool.name, tool_input: input, tool_use_id: toolUseId },
      ctx,
      controller.signal,
    );
    if (pre.blocked)
      return ToolResult.rejected(`A PreToolUse hook blocked this call: ${pre.blocked}`, {
        blockedBy: "hook",
      });
    if (pre.updatedInput) {
      validation = validateInput(tool, pre.updatedInput);
      if (!validation.ok)
        return ToolResult.rejected(`A PreToolUse hook supplied invalid input. ${validation.message}`);
      input = validation.value;
    }

    const permission = await decide(tool, input, ctx, pre, controller.signal);
    if (permission.refused) return permission.refused;

    const call = callContext(ctx, {
      signal: controller.signal,
      toolUseId,
      ...(permission.approvedByUser ? { approvedByUser: true } : {}),
      reportProgress: (p: Progress) => options.onProgress?.(p),
    });
    let result = await executeBounded(
      tool,
      input,
      call,
      options.deadlineMs ?? TOOL_CALL_DEADLINE_MS,
      controller,
    );
    result = applyResultBudget(result, tool.maxResultChars, ctx.session, tool.name);
    if (permission.trace)
      result = { ...result, metadata: { ...result.metadata, permissionTrace: permission.trace } };

    const post = await runHooks(
      "PostToolUse",
      { tool_name: tool.name, tool_input: input, tool_use_id: toolUseId, tool_response: result },
      ctx,
      controller.signal,
    );
    const feedback = [...post.feedback, ...(post.stopped ? [post.stopped] : [])];
    if (feedback.length > 0) {
      result = {
        ...result,
        content: [
          ...result.content,
          { type: "text", text: `PostToolUse hook feedback:\n${feedback.join("\n")}` },
        ],
      };
    }
    return result;
  } finally {
    outer?.removeEventListener("abort", forwardAbort);
  }
}

/**
 * What the rules said about a call, for the result's metadata (`cc-tools run --json` shows it): the
 * decision and every rule that matched.
 */
interface PermissionTrace {
  behavior: PermissionDecision["behavior"];
  reason: string;
  matchedRules: Array<{ rule: string; behavior: string; scope: string; file?: string; agent?: string }>;
}

function traceOf(decision: PermissionDecision): PermissionTrace {
  return {
    behavior: decision.behavior,
    reason: decision.reason,
    matchedRules: (decision.matchedRules ?? []).map(({ rule, behavior, source, agent }) => ({
      rule,
      behavior,
      scope: source.scope,
      ...(source.file ? { file: source.file } : {}),
      ...(agent ? { agent } : {}),
    })),
  };
}

/** An error result when the call may not run (refused), and the decision's trace either way. */
async function decide(
  tool: AnyTool,
  input: unknown,
  ctx: ToolContext,
  pre: Awaited<ReturnType<typeof runHooks>>,
  signal: AbortSignal,
): Promise<{ refused?: ToolResult; trace?: PermissionTrace; approvedByUser?: boolean }> {
  if (pre.permissionDecision === "deny") {
    return {
      refused: ToolResult.rejected(`Permission denied by a PreToolUse hook: ${pre.permissionReason}`, {
        permission: "deny",
      }),
    };
  }
  const hook =
    pre.permissionDecision === "allow" || pre.permissionDecision === "ask"
      ? { decision: pre.permissionDecision, reason: pre.permissionReason ?? "no reason given" }
      : undefined;
  const decision = await ctx.checkPermission(tool, input, signal, hook);
  const trace = traceOf(decision);
  // An allowed call shows its trace when rules spoke; with none, the mode's table decided alone.
  if (decision.behavior === "allow") {
    return {
      ...(trace.matchedRules.length > 0 ? { trace } : {}),
      ...(decision.approvedByUser ? { approvedByUser: true } : {}),
    };
  }
  return {
    trace,
    refused: ToolResult.error(`Permission to use ${tool.name} was denied: ${decision.reason}`, {
      permission: decision.behavior,
      rule: decision.rule?.rule,
      permissionTrace: trace,
    }),
  };
}
