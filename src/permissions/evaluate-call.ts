import type { Evaluation, LoadedRule } from "./evaluation.js";
import { askReason, byRule, defaultAllowReason, finish, planDenial } from "./outcomes.js";
import type { PermissionDecision } from "./types.js";

/** Decides a call that is not a shell command: one subject, one cell of the table. */
export function evaluateCall(ev: Evaluation): PermissionDecision {
  const { input } = ev;
  const { subject, toolName, level } = input;
  const view = subject.kind === "path" ? ev.pathView(subject.path) : undefined;
  const matches = (loaded: LoadedRule) => ev.matchesCall(loaded, view);
  const what = view ? `${toolName} on ${view.canonical}` : toolName;
  const denied = ev.rules.deny.find(matches);
  if (denied) return byRule("deny", denied, what);
  const writes = subject.kind === "path" && subject.access === "write";
  const inside = view === undefined || (writes ? ev.insideForWrite(view) : ev.inside(view));
  const cell = ev.cell(inside);
  if (cell === "deny") return planDenial(input);
  const asked = ev.rules.ask.find(matches);
  if (asked) return finish(input, byRule("ask", asked, what));
  if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, inside) };
  const allowed = level === "dangerous" ? undefined : ev.rules.allow.find(matches);
  if (allowed) return byRule("allow", allowed, what);
  return finish(input, { behavior: "ask", reason: askReason(ev, what, inside, view) });
}
