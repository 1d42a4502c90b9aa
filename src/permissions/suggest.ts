import { canonicalPath, expandTilde } from "../fs/canonical.js";
import { commandPrefix } from "./command-arity.js";
import { evaluatePermission } from "./evaluate.js";
import { escapePathPattern } from "./paths.js";
import { splitPowerShell } from "./powershell-split.js";
import { validateRule } from "./rules.js";
import { commandText, splitBash } from "./shell-split.js";
import type { EvaluationInput, PermissionRuleEntry } from "./types.js";

/** Above this many candidate rules, suggestions are not pruned one by one (each prune re-evaluates the call). */
export const MAX_PRUNED_SUGGESTIONS = 16;

const SHELL_RULE = { bash: "Bash", powershell: "PowerShell" } as const;

/** A rule naming exactly one file, whatever characters its path holds. */
function exactPathRule(tool: "Read" | "Edit", path: string): string {
  return `${tool}(/${escapePathPattern(path)})`;
}

/** Candidate rules, narrowest first: one per simple command and per redirect target, or one for the call. */
function candidates(input: EvaluationInput): string[] {
  const { subject, toolName } = input;
  switch (subject.kind) {
    case "command": {
      const split = subject.shell === "bash" ? splitBash(subject.command) : splitPowerShell(subject.command);
      if (!split.ok) return [];
      const rules = split.commands.flatMap((part) => [
        ...(part.words.length > 0 ? [`${SHELL_RULE[subject.shell]}(${commandText(part)})`] : []),
        ...part.writes.map((target) =>
          exactPathRule("Edit", canonicalPath(expandTilde(target, input.homeDir), input.workingDir)),
        ),
      ]);
      return [...new Set(rules)];
    }
    case "path": {
      const path = canonicalPath(expandTilde(subject.path, input.homeDir), input.workingDir);
      return [exactPathRule(subject.access === "read" ? "Read" : "Edit", path)];
    }
    case "url": {
      try {
        return [`${toolName}(domain:${new URL(subject.url).hostname})`, toolName];
      } catch {
        return [toolName];
      }
    }
    case "specifier":
      return [`${toolName}(${subject.value})`, toolName];
    default:
      // A bare name: `mcp__server__tool` for an MCP tool, which matches only that tool.
      return [toolName];
  }
}

function allowsWith(input: EvaluationInput, rules: readonly string[]): boolean {
  const extra: PermissionRuleEntry[] = rules.map((rule) => ({
    rule,
    behavior: "allow",
    source: { scope: "session", root: input.workingDir },
  }));
  // The suggestion is for a person about to approve; dontAsk never gets that far, so judge as default.
  const mode = input.mode === "dontAsk" ? "default" : input.mode;
  return evaluatePermission({ ...input, mode, rules: [...input.rules, ...extra] }).behavior === "allow";
}

/**
 * The narrowest rules that, added as allow rules, make this call allowed — each checked by running the
 * evaluator, never just assumed. A shell command gets one exact rule per part that is not already
 * allowed (so approving `npm test && rm x` when npm test is allowed suggests only `Bash(rm x)`), plus an
 * exact Edit rule per file it redirects into. Empty when no rule can allow the call (a Dangerous tool,
 * a command too complex to split, a deny rule in the way).
 */
export function suggestRules(input: EvaluationInput): string[] {
  const all = candidates(input).filter((rule) => validateRule(rule) === undefined);
  if (input.subject.kind !== "command") {
    const single = all.find((rule) => allowsWith(input, [rule]));
    return single ? [single] : [];
  }
  if (!allowsWith(input, all)) return [];
  if (all.length > MAX_PRUNED_SUGGESTIONS) return all;
  let kept = all;
  for (const rule of all) {
    const without = kept.filter((r) => r !== rule);
    if (allowsWith(input, without)) kept = without;
  }
  return kept;
}

/**
 * Beside the exact rules, one broader set a person may prefer to remember: the exact suggestion with each
 * command rule replaced by its prefix rule from the arity table (`Bash(npm run dev --port 3)` →
 * `Bash(npm run dev:*)`), checked like the exact ones. Empty when no part has a safe prefix (see
 * command-arity.ts: never a prefix that allows anything) or when the broader set would not allow the call.
 */
export function suggestPrefixRules(input: EvaluationInput, exact: readonly string[]): string[] {
  const { subject } = input;
  if (subject.kind !== "command" || exact.length === 0) return [];
  const tool = SHELL_RULE[subject.shell];
  let widened = false;
  const rules = exact.map((rule) => {
    if (!rule.startsWith(`${tool}(`)) return rule;
    const text = rule.slice(tool.length + 1, -1);
    const split = subject.shell === "bash" ? splitBash(text) : splitPowerShell(text);
    const part = split.ok && split.commands.length === 1 ? split.commands[0]! : undefined;
    const prefix = part && part.assignments.length === 0 ? commandPrefix(part.words) : undefined;
    if (!prefix) return rule;
    widened = true;
    return `${tool}(${prefix.join(" ")}:*)`;
  });
  const unique = [...new Set(rules)];
  if (!widened || unique.some((rule) => validateRule(rule) !== undefined)) return [];
  return allowsWith(input, unique) ? unique : [];
}
