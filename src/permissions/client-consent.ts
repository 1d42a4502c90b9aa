import { evaluatePermission } from "./evaluate.js";
import { suggestRules } from "./suggest.js";
import type { EvaluationInput, PermissionDecision, PermissionRuleEntry } from "./types.js";

/**
 * One consent, not two. An MCP client (Claude Code, Claude Desktop, VS Code, Cursor) asks its user before
 * it sends a tool call; asking again for the same call only trains people to click through. So when the
 * host says its client approves calls, an `ask` for what the client could see and judge becomes `allow`:
 * file edits inside the workspace, and the commands (or other servers' tools) the call names.
 *
 * What the client cannot see stays ours to guard, and keeps asking: deny and ask rules (the call is judged
 * under them as usual), reads and writes outside the workspace, the control files (settings, .mcp.json,
 * .git), redirections into those, commands that cannot be checked part by part, and the Dangerous level.
 *
 * It is decided by the one evaluator: the call is judged as in acceptEdits mode, with the exact allow rules
 * that name this call's commands or tool (never a file rule, so a path's place is what decides). Whatever
 * that does not allow is not covered by the client's approval; that judgement (and its input, so the rules
 * suggested to the user are only the ones still missing) is returned for the question that follows.
 */
export function clientApproval(
  input: EvaluationInput,
): { decision: PermissionDecision; input: EvaluationInput } | undefined {
  if (input.level === "dangerous" || (input.mode !== "default" && input.mode !== "acceptEdits"))
    return undefined;
  const asEdits: EvaluationInput = { ...input, mode: "acceptEdits" };
  const ownTool = (rule: string) => rule.split("(")[0] === input.toolName;
  const grants: PermissionRuleEntry[] =
    input.subject.kind === "path"
      ? []
      : suggestRules(asEdits)
          .filter(ownTool)
          .map((rule) => ({ rule, behavior: "allow", source: { scope: "session", root: input.workingDir } }));
  const judged: EvaluationInput = { ...asEdits, rules: [...input.rules, ...grants] };
  const decision = evaluatePermission(judged);
  if (decision.behavior !== "allow") return { decision, input: judged };
  return {
    decision: {
      behavior: "allow",
      reason: "approved by the MCP client, which asked its user before sending the call",
    },
    input: judged,
  };
}
