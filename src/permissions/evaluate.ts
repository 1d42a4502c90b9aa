import { evaluateCall } from "./evaluate-call.js";
import { evaluateCommand } from "./evaluate-command.js";
import { Evaluation } from "./evaluation.js";
import type { EvaluationInput, PermissionDecision } from "./types.js";

export { DECISION_TABLE } from "./decision-table.js";
export { SAFE_ENV_VARS } from "./shell-wrappers.js";

/**
 * Decides one tool call from the mode, the level and the rules. Pure apart from reading the file system
 * to canonicalise paths. Precedence: deny rules → plan's denials → ask rules → the decision table →
 * allow rules → ask (a deny in dontAsk mode). The parts: decision-table.ts (mode × level),
 * evaluation.ts (rules and paths as one decision sees them), evaluate-call.ts (a call with one subject),
 * evaluate-command.ts (a shell command, part by part) with shell-wrappers.ts (what runs what), and
 * read-restriction.ts (the filter of directory-wide searches).
 */
export function evaluatePermission(input: EvaluationInput): PermissionDecision {
  if (input.level === "none") return { behavior: "allow", reason: "this tool needs no permission" };
  const ev = new Evaluation(input);
  const { subject } = input;
  const decision =
    subject.kind === "command"
      ? evaluateCommand(ev, subject.command, subject.shell, subject.cwd)
      : evaluateCall(ev);
  if (decision.rule) ev.matched.add(decision.rule);
  return { ...decision, matchedRules: [...ev.matched] };
}
