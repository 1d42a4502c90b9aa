import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { PermissionLevel, PermissionMode } from "../core/permission-level.js";
import type { PermissionSubject } from "../core/tool.js";
import { canonicalPath, compilePathPattern, expandTilde, isWithin } from "./paths.js";
import { splitPowerShell } from "./powershell-split.js";
import {
  coversPathAccess,
  hostMatches,
  mcpServerOf,
  type ParsedRule,
  parseRule,
  type Shell,
} from "./rules.js";
import { commandText, type SimpleCommand, splitBash } from "./shell-split.js";
import type { EvaluationInput, PermissionDecision, PermissionRuleEntry, RuleBehavior } from "./types.js";

/**
 * What a mode does with a level when no rule speaks, for a subject inside the workspace and outside it.
 * dontAsk uses the default row and then turns every remaining ask into a deny. Rules act around this
 * table: deny rules win over everything, plan's denials win over ask and allow rules, ask rules win over
 * the table's allow, and allow rules turn the table's ask into allow (never for Dangerous).
 */
export const DECISION_TABLE: Record<
  PermissionMode,
  Record<Exclude<PermissionLevel, "none">, { inside: RuleBehavior; outside: RuleBehavior }>
> = {
  default: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "ask", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
  acceptEdits: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "allow", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
  plan: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "deny", outside: "deny" },
    execute: { inside: "deny", outside: "deny" },
    dangerous: { inside: "deny", outside: "deny" },
  },
  bypassPermissions: {
    readOnly: { inside: "allow", outside: "allow" },
    write: { inside: "allow", outside: "allow" },
    execute: { inside: "allow", outside: "allow" },
    dangerous: { inside: "allow", outside: "allow" },
  },
  dontAsk: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "ask", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
};

/**
 * Environment assignments that cannot change which program runs or what it loads, so `NODE_ENV=test npm
 * test` is covered by `Bash(npm test:*)`. Any other assignment (PATH, LD_PRELOAD, NODE_OPTIONS, …) stays
 * part of the command an allow rule must match: `Bash(FOO=1 npm test:*)`.
 */
export const SAFE_ENV_VARS = new Set([
  "CI",
  "DEBUG",
  "FORCE_COLOR",
  "GOARCH",
  "GOOS",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "NO_COLOR",
  "NODE_ENV",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONUNBUFFERED",
  "RUST_BACKTRACE",
  "RUST_LOG",
  "TERM",
  "TZ",
]);

/**
 * Programs that run the command in their arguments. Deny and ask rules also look through them, so
 * `Bash(rm:*)` denies `sudo rm x` and `timeout 5 rm x`. (Allow rules need not: the wrapper itself
 * must be allowed, and `Bash(timeout:*)` is the user's explicit choice.)
 */
const WRAPPERS = new Set([
  "builtin",
  "command",
  "doas",
  "env",
  "exec",
  "ionice",
  "nice",
  "nohup",
  "stdbuf",
  "sudo",
  "time",
  "timeout",
  "xargs",
]);
/** Words a wrapper takes before the wrapped command: options, assignments, durations, niceness values. */
const WRAPPER_ARGUMENT = /^(-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?)$/;
/** Commands that change the directory later relative paths in the same command line resolve against. */
const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);

interface LoadedRule {
  entry: PermissionRuleEntry;
  rule: ParsedRule;
}

/** Valid rules by behavior; invalid ones are skipped here and reported by validateRule where rules load. */
function loadRules(entries: readonly PermissionRuleEntry[]): Record<RuleBehavior, LoadedRule[]> {
  const loaded: Record<RuleBehavior, LoadedRule[]> = { deny: [], ask: [], allow: [] };
  for (const entry of entries) {
    const parsed = parseRule(entry.rule);
    if (parsed.ok) loaded[entry.behavior].push({ entry, rule: parsed.rule });
  }
  return loaded;
}

function describeRule(entry: PermissionRuleEntry): string {
  const from =
    entry.source.file ?? (entry.source.scope === "cli" ? "the command line" : `${entry.source.scope} rules`);
  return `the ${entry.behavior} rule ${entry.rule} (${from})`;
}

/**
 * A path as the call wrote it (resolved, links untouched) and where it really leads. Allow rules see only
 * the real target; deny and ask rules match either, so no spelling of a path slips past them.
 */
interface PathView {
  canonical: string;
  lexical: string;
}

class Evaluation {
  readonly rules: Record<RuleBehavior, LoadedRule[]>;
  private readonly workspace: string[];

  constructor(readonly input: EvaluationInput) {
    this.rules = loadRules(input.rules);
    this.workspace = [input.workingDir, ...input.additionalDirectories].map((dir) => canonicalPath(dir, "/"));
  }

  /** A path as rules see it; relative paths resolve against `base` (the working dir unless told). */
  pathView(path: string, base: string = this.input.workingDir): PathView {
    const expanded = expandTilde(path, this.input.homeDir);
    return {
      canonical: canonicalPath(expanded, base),
      lexical: resolve(base, expanded),
    };
  }

  inside(view: PathView): boolean {
    return this.workspace.some((dir) => isWithin(view.canonical, dir));
  }

  cell(inside: boolean): RuleBehavior {
    const { mode, level } = this.input;
    const row = DECISION_TABLE[mode][level as Exclude<PermissionLevel, "none">];
    return inside ? row.inside : row.outside;
  }

  find(
    behavior: RuleBehavior,
    test: (rule: ParsedRule, entry: PermissionRuleEntry) => boolean,
  ): LoadedRule | undefined {
    return this.rules[behavior].find(({ rule, entry }) => test(rule, entry));
  }

  pathRuleMatches(
    rule: ParsedRule,
    entry: PermissionRuleEntry,
    toolName: string,
    access: "read" | "write",
    view: PathView,
  ): boolean {
    if (rule.kind !== "tool" && rule.kind !== "path" && rule.kind !== "specifier") return false;
    if (!coversPathAccess(rule.tool, entry.behavior, toolName, access)) return false;
    if (rule.kind === "tool") return true;
    const bases = { workingDir: this.input.workingDir, root: entry.source.root, homeDir: this.input.homeDir };
    if (entry.behavior === "allow")
      return compilePathPattern(rule.spec, bases, false).matches(view.canonical);
    const patterns = [
      compilePathPattern(rule.spec, bases, true),
      compilePathPattern(rule.spec, bases, false),
    ];
    return [view.canonical, view.lexical].some((path) => patterns.some((pattern) => pattern.matches(path)));
  }

  /** Whether a rule applies to a call whose subject is not a command. */
  matchesCall(rule: ParsedRule, entry: PermissionRuleEntry, view: PathView | undefined): boolean {
    const { toolName, subject } = this.input;
    if (rule.kind === "mcpServer") return mcpServerOf(toolName) === rule.server;
    if (rule.kind === "tool" && rule.tool === toolName) return true;
    if (subject.kind === "path" && view)
      return this.pathRuleMatches(rule, entry, toolName, subject.access, view);
    if (rule.kind === "domain" && subject.kind === "url" && rule.tool === toolName) {
      const host = hostOf(subject.url);
      return host !== undefined && hostMatches(rule.host, host);
    }
    if (rule.kind === "specifier" && rule.tool === toolName) {
      if (subject.kind === "specifier") return rule.pattern.test(subject.value);
      if (subject.kind === "url") return rule.pattern.test(subject.url);
    }
    return false;
  }
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

function finish(input: EvaluationInput, decision: PermissionDecision): PermissionDecision {
  if (decision.behavior !== "ask" || input.mode !== "dontAsk") return decision;
  return {
    ...decision,
    behavior: "deny",
    reason: `${decision.reason}; dontAsk mode denies whatever would need approval`,
  };
}

function planDenial(input: EvaluationInput): PermissionDecision {
  return {
    behavior: "deny",
    reason: `plan mode only reads and plans, and ${input.toolName} could change things; leave plan mode (ExitPlanMode) to run it`,
  };
}

function byRule(behavior: RuleBehavior, found: LoadedRule, what: string): PermissionDecision {
  const verb = { deny: "is denied by", ask: "needs approval under", allow: "is allowed by" }[behavior];
  return { behavior, reason: `${what} ${verb} ${describeRule(found.entry)}`, rule: found.entry };
}

/** Decides a call that is not a shell command: one subject, one cell of the table. */
function evaluateSingle(ev: Evaluation): PermissionDecision {
  const { input } = ev;
  const { subject, toolName, level } = input;
  const view = subject.kind === "path" ? ev.pathView(subject.path) : undefined;
  const matches = (rule: ParsedRule, entry: PermissionRuleEntry) => ev.matchesCall(rule, entry, view);
  const what = view ? `${toolName} on ${view.canonical}` : toolName;
  const denied = ev.find("deny", matches);
  if (denied) return byRule("deny", denied, what);
  const inside = view === undefined || ev.inside(view);
  const cell = ev.cell(inside);
  if (cell === "deny") return planDenial(input);
  const asked = ev.find("ask", matches);
  if (asked) return finish(input, byRule("ask", asked, what));
  if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, inside) };
  const allowed = level === "dangerous" ? undefined : ev.find("allow", matches);
  if (allowed) return byRule("allow", allowed, what);
  return finish(input, { behavior: "ask", reason: askReason(ev, what, inside, view) });
}

function defaultAllowReason(input: EvaluationInput, inside: boolean): string {
  if (input.mode === "bypassPermissions")
    return "bypassPermissions mode allows every call no deny or ask rule matches";
  if (input.level === "readOnly") return inside ? "reading inside the workspace" : "reading";
  return `${input.mode} mode allows edits inside the workspace`;
}

function askReason(ev: Evaluation, what: string, inside: boolean, view: PathView | undefined): string {
  const { level, mode } = ev.input;
  if (level === "dangerous")
    return `${what} is dangerous and always needs approval (only bypassPermissions skips it)`;
  if (!inside && view) {
    return `${view.canonical} is outside the workspace (${ev.input.workingDir}) and its additional directories`;
  }
  if (level === "write") return `${what} changes files, and ${mode} mode asks before edits`;
  return `${what} needs approval: no allow rule covers it`;
}

/** Deny and ask rules also look at a command without its assignments and through wrappers like `sudo`. */
function restrictiveTexts(command: SimpleCommand): string[] {
  const texts = new Set([commandText(command), commandText(command, () => false)]);
  let words = command.words;
  while (words.length > 1 && WRAPPERS.has(words[0]!)) {
    let next = 1;
    while (next < words.length - 1 && WRAPPER_ARGUMENT.test(words[next]!)) next++;
    words = words.slice(next);
    texts.add(words.join(" "));
  }
  return [...texts];
}

function allowText(command: SimpleCommand): string {
  return commandText(command, (name) => !SAFE_ENV_VARS.has(name));
}

const SHELL_TOOL: Record<Shell, string> = { bash: "Bash", powershell: "PowerShell" };

/**
 * Decides a shell command: every simple command in it and every file it redirects into must be
 * allowed; any part matching a deny rule denies the whole command.
 */
function evaluateCommand(ev: Evaluation, command: string, shell: Shell, cwd?: string): PermissionDecision {
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
    if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, true) };
    const allowed = input.level === "dangerous" ? undefined : ev.find("allow", toolWide);
    if (allowed) return byRule("allow", allowed, "every command");
    return finish(input, {
      behavior: "ask",
      reason: `this command cannot be checked part by part (${split.reason}), so only a person can approve it`,
    });
  }

  const parts = split.commands;
  const changesDirectory = parts.some((part) => DIRECTORY_CHANGERS.has(part.words[0] ?? ""));
  const writes = parts
    .flatMap((part) => part.writes)
    .map((target) => ({ target, view: ev.pathView(target, cwd) }));
  // After a `cd` in the same line, a relative target is somewhere we cannot know.
  const unknownWrites = changesDirectory ? writes.filter((w) => !/^([/~]|\.\/~)/.test(w.target)) : [];
  const writeRule = (behavior: RuleBehavior, view: ReturnType<Evaluation["pathView"]>) =>
    ev.find(behavior, (rule, entry) => ev.pathRuleMatches(rule, entry, input.toolName, "write", view));

  for (const behavior of ["deny", "ask"] as const) {
    const wide = ev.find(behavior, toolWide);
    if (wide) return finish(input, byRule(behavior, wide, "every command"));
    for (const part of parts) {
      const found = ev.find(behavior, commandRule(restrictiveTexts(part)));
      if (found) return finish(input, byRule(behavior, found, `\`${commandText(part)}\``));
    }
    for (const write of writes) {
      const found = writeRule(behavior, write.view);
      if (found) return finish(input, byRule(behavior, found, `writing ${write.view.canonical}`));
    }
    if (behavior === "deny" && cell === "deny") return planDenial(input);
  }
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
    const found = writeRule("allow", view);
    if (found) used.add(found.entry.rule);
    else if ((ev.inside(view) ? writeCell.inside : writeCell.outside) !== "allow") {
      const where = ev.inside(view) ? `and ${input.mode} mode asks before edits` : "outside the workspace";
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

/**
 * Decides one tool call from the mode, the level and the rules. Pure apart from reading the file system
 * to canonicalise paths. Precedence: deny rules → plan's denials → ask rules → the decision table →
 * allow rules → ask (a deny in dontAsk mode).
 */
export function evaluatePermission(input: EvaluationInput): PermissionDecision {
  if (input.level === "none") return { behavior: "allow", reason: "this tool needs no permission" };
  const ev = new Evaluation(input);
  const subject: PermissionSubject = input.subject;
  if (subject.kind === "command") return evaluateCommand(ev, subject.command, subject.shell, subject.cwd);
  return evaluateSingle(ev);
}

/**
 * The files a tool that reads whole directories (Grep, Glob) must leave out: those a path-specific Read
 * deny or ask rule covers. The call's own decision only judged the directory, so without this a Grep of
 * the workspace would show what `Read(.env)` denies. Undefined when no such rule exists (nothing to hide).
 */
export function readRestriction(
  input: Omit<EvaluationInput, "subject" | "level" | "mode">,
): ((absolutePath: string) => boolean) | undefined {
  const ev = new Evaluation({ ...input, subject: { kind: "none" }, level: "readOnly", mode: "default" });
  const restrictive = [...ev.rules.deny, ...ev.rules.ask].filter(
    ({ rule, entry }) =>
      (rule.kind === "path" || rule.kind === "specifier") &&
      coversPathAccess(rule.tool, entry.behavior, input.toolName, "read"),
  );
  if (restrictive.length === 0) return undefined;
  return (path) => {
    let canonical: string;
    try {
      // Listed files exist: one realpath call instead of a walk per component.
      canonical = realpathSync.native(path);
    } catch {
      canonical = ev.pathView(path).canonical;
    }
    const view = { canonical, lexical: resolve(path) };
    return restrictive.some(({ rule, entry }) =>
      ev.pathRuleMatches(rule, entry, input.toolName, "read", view),
    );
  };
}
