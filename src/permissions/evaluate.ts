import type { EvaluationInput, PermissionDecision } from "./types.js";

// Interim: replaced by the full rule engine (decision table, rule matching, compound commands).
export function evaluatePermission(input: EvaluationInput): PermissionDecision {
  if (input.mode === "bypassPermissions") return { behavior: "allow", reason: "bypassPermissions mode" };
  if (input.level === "none" || input.level === "readOnly") return { behavior: "allow", reason: "read-only" };
  return { behavior: input.mode === "dontAsk" ? "deny" : "ask", reason: `${input.toolName} needs approval` };
}
