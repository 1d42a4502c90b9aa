import { homedir } from "node:os";
import type { PermissionDecider, ToolContext } from "../core/context.js";
import { HostCapability } from "../core/host.js";
import type { PermissionDecision, PermissionRuleEntry } from "../core/permission.js";
import type { PermissionMode } from "../core/permission-level.js";
import type { SessionSlot } from "../core/session.js";
import { sandboxAutoAllow } from "../sandbox/permission.js";
import { hookScripts } from "./control-files.js";
import { evaluatePermission } from "./evaluate.js";
import { persistRule } from "./persist.js";
import type { EvaluationInput } from "./types.js";

/** Session-scoped permission state, so a named session keeps its mode and grants between CLI runs. */
export interface PermissionState {
  mode: PermissionMode | undefined;
  granted: PermissionRuleEntry[];
}

export const permissionStateSlot: SessionSlot<PermissionState> = {
  key: "permissions",
  create: () => ({ mode: undefined, granted: [] }),
  save: (s) => s,
  load: (data) => {
    const d = data as Partial<PermissionState>;
    return { mode: d.mode, granted: Array.isArray(d.granted) ? d.granted : [] };
  },
};

/**
 * The ask → grant → persist flow: rules and mode decide first; a PreToolUse hook may answer the question
 * the mode would ask; what is still `ask` goes to the host, and a remembered answer becomes session rules
 * (and, for "always", a rule saved to the project's local settings).
 */
export const decideWithHost: PermissionDecider = async (ctx, tool, input, signal, hook) => {
  if (tool.permissionLevel === "none") return { behavior: "allow", reason: "this tool needs no permission" };
  const subject = tool.permissionSubject(input, ctx);
  let evaluation: EvaluationInput = {
    toolName: tool.name,
    level: tool.permissionLevel,
    subject,
    mode: ctx.permissionMode,
    rules: ctx.rules(),
    workingDir: ctx.workingDir,
    additionalDirectories: ctx.additionalDirectories,
    homeDir: homedir(),
    agentType: ctx.agentType,
    controlFiles: hookScripts(
      Object.values(ctx.config.hooks).flatMap((matchers) =>
        (matchers ?? []).flatMap((m) => m.hooks.map((h) => h.command)),
      ),
      ctx.config.projectDir,
      homedir(),
    ),
  };
  let decision = evaluatePermission(evaluation);
  decision = sandboxAutoAllow(ctx, tool, input, decision) ?? decision;
  const { matchedRules } = decision;
  // A hook answers the question the mode would ask; deny and ask rules are the user's and still hold.
  const byAskRule = decision.behavior === "ask" && decision.rule !== undefined;
  if (hook?.decision === "allow" && decision.behavior !== "deny" && !byAskRule) {
    return { behavior: "allow", reason: `allowed by a PreToolUse hook: ${hook.reason}`, matchedRules };
  }
  if (hook?.decision === "ask" && decision.behavior === "allow") {
    decision = {
      behavior: "ask",
      reason: `a PreToolUse hook asks for approval: ${hook.reason}`,
      matchedRules,
    };
  }
  if (decision.behavior === "deny" && ctx.permissionMode === "dontAsk" && decision.rule === undefined) {
    return namingTheRule(evaluation, decision);
  }
  if (decision.behavior !== "ask") return decision;
  if (ctx.mcpClient?.approvesCalls && hook?.decision !== "ask") {
    // One consent, not two: what is left to ask (and why) is what the client's approval does not cover.
    const { clientApproval } = await import("./client-consent.js");
    const consent = clientApproval(evaluation);
    if (consent?.decision.behavior === "allow") return consent.decision;
    if (consent?.decision.behavior === "ask") ({ decision, input: evaluation } = consent);
  }

  const { suggestPrefixRules, suggestRules } = await import("./suggest.js");
  const suggestedRules = suggestRules(evaluation);
  const prefixRules = suggestPrefixRules(evaluation, suggestedRules);
  const answer = await ctx.host.askPermission(
    {
      toolName: tool.name,
      input,
      level: tool.permissionLevel,
      subject,
      mode: ctx.permissionMode,
      reason: decision.reason,
      suggestedRules,
      prefixRules,
      workingDir: ctx.workingDir,
    },
    signal,
  );
  if (answer.behavior === "deny") {
    return {
      behavior: "deny",
      reason: answer.message ?? `${decision.reason}; the request was declined`,
      matchedRules,
    };
  }
  // A policy (allow-all automation) answers without anyone having seen the call: only a person's answer
  // is an approval of this very call.
  const approvedByUser = ctx.host.supports(HostCapability.PermissionPrompt) ? { approvedByUser: true } : {};
  if (answer.scope === "once")
    return { behavior: "allow", reason: "allowed by the user (once)", matchedRules, ...approvedByUser };
  const remembered = answer.remember === "prefix" && prefixRules.length > 0 ? prefixRules : suggestedRules;
  return { ...(await remember(ctx, remembered, answer.scope)), matchedRules, ...approvedByUser };
};

async function remember(
  ctx: ToolContext,
  rules: string[],
  scope: "session" | "always",
): Promise<PermissionDecision> {
  ctx.addRules(
    rules.map((rule) => ({ rule, behavior: "allow", source: { scope: "session", root: ctx.workingDir } })),
  );
  if (scope === "always") {
    try {
      for (const rule of rules) await persistRule(ctx.config.projectDir, rule);
    } catch (error) {
      return {
        behavior: "allow",
        reason: `allowed by the user for this session; saving the rule failed: ${(error as Error).message}`,
      };
    }
  }
  return { behavior: "allow", reason: `allowed by the user (${scope})` };
}

/** A dontAsk refusal of what would have been asked names the allow rule that lets the call through. */
async function namingTheRule(
  evaluation: EvaluationInput,
  decision: PermissionDecision,
): Promise<PermissionDecision> {
  if (evaluatePermission({ ...evaluation, mode: "default" }).behavior !== "ask") return decision;
  const { suggestRules } = await import("./suggest.js");
  const { howToAllow } = await import("./handlers.js");
  const suggestedRules = suggestRules(evaluation);
  return {
    ...decision,
    reason: `${decision.reason}. ${howToAllow({ suggestedRules, mode: evaluation.mode })}`,
  };
}
