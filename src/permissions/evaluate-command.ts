import { DECISION_TABLE } from "./decision-table.js";
import { describeRule, type Evaluation, type PathView } from "./evaluation.js";
import { askReason, byRule, defaultAllowReason, finish, planDenial } from "./outcomes.js";
import { splitPowerShell } from "./powershell-split.js";
import { type ParsedRule, READ_RULE_TOOLS, type Shell, WRITE_RULE_TOOLS } from "./rules.js";
import { commandText, splitBash } from "./shell-split.js";
import { allowText, DIRECTORY_CHANGERS, type RestrictiveView, restrictiveView } from "./shell-wrappers.js";
import type { PermissionDecision, RuleBehavior } from "./types.js";

const SHELL_TOOL: Record<Shell, string> = { bash: "Bash", powershell: "PowerShell" };

/**
 * When part of a command cannot be seen, a deny or ask rule about commands or files might be hiding
 * behind it: then the command asks rather than being allowed by the mode or a whole-tool rule.
 */
function uncheckableRule(ev: Evaluation, shell: Shell, why: string): PermissionDecision | undefined {
  const found = [...ev.rules.deny, ...ev.rules.ask].find(
    ({ rule }) =>
      (rule.kind === "command" && rule.shell === shell) ||
      (rule.kind === "path" && (READ_RULE_TOOLS.has(rule.tool) || WRITE_RULE_TOOLS.has(rule.tool))),
  );
  if (!found) return undefined;
  return {
    behavior: "ask",
    reason: `this command cannot be checked against ${describeRule(found.entry)}: ${why}; only a person can approve it`,
  };
}

/**
 * Decides a shell command: every simple command in it and every file it redirects into must be
 * allowed; any part matching a deny rule denies the whole command.
 */
export function evaluateCommand(
  ev: Evaluation,
  command: string,
  shell: Shell,
  cwd?: string,
): PermissionDecision {
  const { input } = ev;
  const shellTool = SHELL_TOOL[shell];
  const toolWide = (rule: ParsedRule) =>
    rule.kind === "tool" && (rule.tool === input.toolName || rule.tool === shellTool);
  const commandRule = (texts: string[]) => (rule: ParsedRule) =>
    rule.kind === "command" && rule.shell === shell && texts.some((text) => rule.pattern.matches(text));
  const split = shell === "bash" ? splitBash(command) : splitPowerShell(command);
  const cell = ev.cell(true);

  if (!split.ok) {
    const raw = [command.trim().replace(/\s+/g, " ")];
    const denied = ev.find("deny", (rule) => toolWide(rule) || commandRule(raw)(rule));
    if (denied) return byRule("deny", denied, "this command");
    if (cell === "deny") return planDenial(input);
    const asked = ev.find("ask", (rule) => toolWide(rule) || commandRule(raw)(rule));
    if (asked) return finish(input, byRule("ask", asked, "this command"));
    const unchecked = uncheckableRule(ev, shell, split.reason);
    if (unchecked) return finish(input, unchecked);
    if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, true) };
    const allowed = input.level === "dangerous" ? undefined : ev.find("allow", toolWide);
    if (allowed) return byRule("allow", allowed, "every command");
    return finish(input, {
      behavior: "ask",
      reason: `this command cannot be checked part by part (${split.reason}), so only a person can approve it`,
    });
  }

  const parts = split.commands;
  const changesDirectory = parts.some(({ words }) =>
    DIRECTORY_CHANGERS.has((words[0] === "builtin" || words[0] === "command" ? words[1] : words[0]) ?? ""),
  );
  const writes = parts
    .flatMap((part) => part.writes)
    .map((target) => ({ target, view: ev.pathView(target, cwd) }));
  // After a `cd` in the same line, a relative target is somewhere we cannot know.
  const unknownWrites = changesDirectory ? writes.filter((w) => !/^([/~]|\.\/~)/.test(w.target)) : [];
  const pathRule = (behavior: RuleBehavior, access: "read" | "write", view: PathView) =>
    ev.findPathRule(behavior, access, view);
  const views = parts.map((part) => {
    const view: RestrictiveView = { texts: new Set(), writes: [], reads: [] };
    restrictiveView(part, shell, view);
    return { part, ...view, texts: [...view.texts] };
  });

  for (const behavior of ["deny", "ask"] as const) {
    const wide = ev.find(behavior, toolWide);
    if (wide) return finish(input, byRule(behavior, wide, "every command"));
    for (const { part, texts, writes: written, reads } of views) {
      const found = ev.find(behavior, commandRule(texts));
      if (found) return finish(input, byRule(behavior, found, `\`${commandText(part)}\``));
      for (const [access, targets] of [
        ["write", written],
        ["read", reads],
      ] as const) {
        for (const target of targets) {
          const view = ev.pathView(target, cwd);
          const byPath = pathRule(behavior, access, view);
          const what = `${access === "write" ? "writing" : "reading"} ${view.canonical}`;
          if (byPath) return finish(input, byRule(behavior, byPath, what));
        }
      }
    }
    if (behavior === "deny" && cell === "deny") return planDenial(input);
  }
  const hidden = views.find((view) => view.hidden)?.hidden;
  const unchecked = hidden === undefined ? undefined : uncheckableRule(ev, shell, hidden);
  if (unchecked) return finish(input, unchecked);
  if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, true) };
  if (input.level === "dangerous") {
    return finish(input, { behavior: "ask", reason: askReason(ev, input.toolName, true, undefined) });
  }
  const wideAllow = ev.find("allow", toolWide);
  if (wideAllow) return byRule("allow", wideAllow, "every command");

  const used = new Set<string>();
  for (const part of parts) {
    const text = allowText(part);
    if (text === "") continue;
    const found = ev.find("allow", commandRule([text]));
    if (!found) {
      return finish(input, { behavior: "ask", reason: `\`${text}\` is not covered by any allow rule` });
    }
    used.add(found.entry.rule);
  }
  if (unknownWrites.length > 0) {
    return finish(input, {
      behavior: "ask",
      reason: `the command changes directory before writing ${unknownWrites[0]!.target}, so where it writes cannot be checked`,
    });
  }
  const writeCell = DECISION_TABLE[input.mode].write;
  for (const { view } of writes) {
    const found = pathRule("allow", "write", view);
    if (found) used.add(found.entry.rule);
    else if ((ev.insideForWrite(view) ? writeCell.inside : writeCell.outside) !== "allow") {
      const where = ev.insideForWrite(view)
        ? `and ${input.mode} mode asks before edits`
        : ev.inside(view)
          ? "and it decides what may run here, so changing it always needs approval"
          : "outside the workspace";
      return finish(input, {
        behavior: "ask",
        reason: `the command writes ${view.canonical} (a redirection) ${where}; no Edit rule allows it`,
      });
    }
  }
  return {
    behavior: "allow",
    reason:
      used.size > 0
        ? `every part is allowed (by ${[...used].join(", ")})`
        : "the command runs nothing that needs a rule",
  };
}
