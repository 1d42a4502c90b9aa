import { describeRule, type Evaluation, type LoadedRule, type PathView } from "./evaluation.js";
import type { EvaluationInput, PermissionDecision, RuleBehavior } from "./types.js";

/** The last step of every decision: dontAsk turns whatever would need approval into a denial. */
export function finish(input: EvaluationInput, decision: PermissionDecision): PermissionDecision {
  if (decision.behavior !== "ask" || input.mode !== "dontAsk") return decision;
  return {
    ...decision,
    behavior: "deny",
    reason: `${decision.reason}; dontAsk mode refuses, instead of asking, whatever no allow rule covers`,
  };
}

export function planDenial(input: EvaluationInput): PermissionDecision {
  return {
    behavior: "deny",
    reason: `plan mode is on: it only reads and plans, and ${input.toolName} could change things; it runs once the session leaves plan mode (ExitPlanMode with a plan the user approves, or another --permission-mode)`,
  };
}

export function byRule(behavior: RuleBehavior, found: LoadedRule, what: string): PermissionDecision {
  const verb = { deny: "is denied by", ask: "needs approval under", allow: "is allowed by" }[behavior];
  return { behavior, reason: `${what} ${verb} ${describeRule(found.entry)}`, rule: found.entry };
}

export function defaultAllowReason(input: EvaluationInput, inside: boolean): string {
  if (input.mode === "bypassPermissions")
    return "bypassPermissions mode allows every call no deny or ask rule matches";
  if (input.level === "readOnly") return inside ? "reading inside the workspace" : "reading";
  return `${input.mode} mode allows edits inside the workspace`;
}

export function askReason(ev: Evaluation, what: string, inside: boolean, view: PathView | undefined): string {
  const { level, mode } = ev.input;
  if (level === "dangerous")
    return `${what} is dangerous and always needs approval (only bypassPermissions skips it)`;
  if (!inside && view && ev.inside(view)) {
    return `${view.canonical} decides what may run here (permissions, hooks, MCP servers or git hooks), so changing it always needs approval`;
  }
  if (!inside && view) {
    return `${view.canonical} is outside the workspace (${ev.input.workingDir}) and its additional directories`;
  }
  if (ev.input.subject.kind === "url")
    return `${what} of ${ev.input.subject.url} reaches the network, and no allow rule covers that host`;
  if (level === "write")
    return mode === "dontAsk"
      ? `${what} changes files`
      : `${what} changes files, and ${mode} mode asks before edits`;
  return `${what} needs approval: no allow rule covers it`;
}
