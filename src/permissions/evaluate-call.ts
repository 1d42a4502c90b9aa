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
  // Every behavior is matched before deciding, so the trace holds every rule that speaks to this call.
  const [denied, asked, matchedAllow] = (["deny", "ask", "allow"] as const).map((b) => ev.find(b, matches));
  if (denied) return byRule("deny", denied, what);
  const writes = subject.kind === "path" && subject.access === "write";
  // The network is outside the workspace: a fetch asks unless a rule (WebFetch(domain:…)) allows it.
  const inside =
    view === undefined ? subject.kind !== "url" : writes ? ev.insideForWrite(view) : ev.inside(view);
  const cell = ev.cell(inside);
  // A control file is allowed only by a rule naming it, never by a broad one (`Edit(./**)`, `Edit`).
  const control = writes && view !== undefined && ev.isControl(view);
  const allowed = control
    ? ev.rules.allow.find((loaded) => matches(loaded) && ev.namesFile(loaded))
    : matchedAllow;
  if (cell === "deny") return planDenial(input);
  if (asked) return finish(input, byRule("ask", asked, what));
  if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, inside) };
  if (allowed && level !== "dangerous") return byRule("allow", allowed, what);
  return finish(input, { behavior: "ask", reason: askReason(ev, what, inside, view) });
}
