import { realpathSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import type { PermissionLevel, PermissionMode } from "../core/permission-level.js";
import type { PermissionSubject } from "../core/tool.js";
import { canonicalPath, escapes, expandTilde, isWithin } from "../fs/canonical.js";
import { compilePathPattern } from "./paths.js";
import { splitPowerShell } from "./powershell-split.js";
import {
  coversPathAccess,
  hostMatches,
  mcpServerOf,
  type ParsedRule,
  parseRule,
  READ_RULE_TOOLS,
  type Shell,
  WRITE_RULE_TOOLS,
} from "./rules.js";
import { commandText, type SimpleCommand, setsOnlyShellVariables, splitBash } from "./shell-split.js";
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
  "busybox",
  "chroot",
  "chrt",
  "command",
  "doas",
  "env",
  "exec",
  "flock",
  "ionice",
  "ltrace",
  "nice",
  "nohup",
  "nsenter",
  "setsid",
  "stdbuf",
  "strace",
  "sudo",
  "taskset",
  "time",
  "timeout",
  "unshare",
  "watch",
  "xargs",
]);
/** Words a wrapper takes before the wrapped command: options, assignments, durations, niceness values. */
const WRAPPER_ARGUMENT = /^(-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?)$/;
/** Shells whose `-c` argument is a command line of its own: deny and ask rules look into it. */
const SHELLS = new Set(["ash", "bash", "dash", "ksh", "mksh", "sh", "zsh"]);
/** Other programs whose `-c` argument is a shell command line: `su -c`, `script -c`, `flock -c`. */
const SCRIPT_RUNNERS = new Set(["su", "script", "flock"]);
/** A shell option cluster holding `-c` (`-c`, `-lc`, `-ec`). */
const SHELL_COMMAND_FLAG = /^-[A-Za-z]*c[A-Za-z]*$/;
/** Shell options that take the next word as their argument. */
const SHELL_OPTION_WITH_ARGUMENT = /^[-+][oO]$/;
/** find actions whose following words, up to `;` or `+`, are a command find runs. */
const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** Wrappers that take one operand before the command: `flock LOCKFILE cmd`, `chroot DIR cmd`, `taskset MASK cmd`. */
const WRAPPERS_WITH_OPERAND = new Set(["chroot", "flock", "taskset"]);
/** Variables that make a shell started later run code from them: `BASH_ENV=<(…) bash -c true`. */
const SHELL_CODE_VARIABLE = /^'?(BASH_ENV|ENV|BASH_FUNC_[^=]*|SHELLOPTS|BASHOPTS|PROMPT_COMMAND)=/;
/** Builtins that run a file's lines as commands of this shell. */
const SOURCE_COMMANDS = new Set([".", "source"]);
/** Builtins whose commands only exist at run time (the splitter refuses them as command names). */
const HIDDEN_RUNNERS = new Set(["eval", "trap", "alias"]);
/**
 * Script files whose text is not on disk for anyone to review: a pipe (`<(…)`), standard input or another
 * descriptor. `bash <(echo rm x)` and `. /dev/stdin <<< "rm x"` are commands fed in, not programs.
 */
const STREAM_FILE = /^\/(dev\/(stdin|fd\/)|proc\/)/;
/** A word bash turns into other words: an unquoted glob or a brace expansion (`{rm,x}`; `{}` stays). */
const EXPANDING_WORD = /[*?[]|\{[^}]*(,|\.\.)[^}]*\}/;
/** How deep `sh -c 'sh -c …'` is followed before the inner command counts as unknown. */
const MAX_SHELL_DEPTH = 4;
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

  /**
   * Inside for a write: in the workspace, and not one of the files that decide what may run (settings
   * with permission rules and hooks, .mcp.json, git hooks and config). A write there could grant the
   * writer more than it was given, so it is judged as if outside: acceptEdits asks.
   */
  insideForWrite(view: PathView): boolean {
    if (!this.inside(view)) return false;
    // Both spellings: the path as written (a symlinked .git still says .git) and where it leads.
    const lexicalRoots = [this.input.workingDir, ...this.input.additionalDirectories];
    return !(
      this.workspace.some((dir) => isControlFile(view.canonical, dir)) ||
      lexicalRoots.some((dir) => isControlFile(view.lexical, dir))
    );
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
    reason: `${decision.reason}; dontAsk mode refuses, instead of asking, whatever no allow rule covers`,
  };
}

function planDenial(input: EvaluationInput): PermissionDecision {
  return {
    behavior: "deny",
    reason: `plan mode is on: it only reads and plans, and ${input.toolName} could change things; it runs once the session leaves plan mode (ExitPlanMode with a plan the user approves, or another --permission-mode)`,
  };
}

function byRule(behavior: RuleBehavior, found: LoadedRule, what: string): PermissionDecision {
  const verb = { deny: "is denied by", ask: "needs approval under", allow: "is allowed by" }[behavior];
  return { behavior, reason: `${what} ${verb} ${describeRule(found.entry)}`, rule: found.entry };
}

/** Settings files whose rules and hooks apply wherever they sit in a workspace (a subdirectory can be a cwd). */
const CONTROL_SETTINGS = new Set(["settings.json", "settings.local.json"]);

/**
 * Files in a workspace that control permissions, hooks and what runs (see Evaluation.insideForWrite): any
 * .claude/settings*.json and .mcp.json at any depth, and anything in or named .git (config, hooks, and the
 * gitfile of a worktree, whose gitdir line picks the config).
 */
function isControlFile(path: string, workspace: string): boolean {
  const rel = relative(workspace, path);
  if (rel === "" || escapes(rel)) return false;
  const parts = rel.split(sep);
  const name = parts[parts.length - 1]!;
  return (
    parts.includes(".git") ||
    name === ".mcp.json" ||
    (CONTROL_SETTINGS.has(name) && parts[parts.length - 2] === ".claude")
  );
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
  const writes = subject.kind === "path" && subject.access === "write";
  // The network is outside the workspace: a fetch asks unless a rule (WebFetch(domain:…)) allows it.
  const inside =
    view === undefined ? subject.kind !== "url" : writes ? ev.insideForWrite(view) : ev.inside(view);
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

/**
 * Where the words after `from` may stop being options: after each option, and after each option's
 * possible argument (`sudo -u root rm`, `git -C dir push`, `timeout -s KILL 5 rm`). Over-generous on
 * purpose: deny and ask rules would rather see a spelling that is not the command than miss one that is.
 */
function optionEnds(words: readonly string[], from: number): number[] {
  const ends = new Set([from]);
  for (let p = from; p < words.length; p++) {
    const word = words[p]!;
    if (!ends.has(p) || !WRAPPER_ARGUMENT.test(word)) continue;
    ends.add(p + 1);
    if (word.startsWith("-") && !word.includes("=") && p + 2 <= words.length) ends.add(p + 2);
  }
  return [...ends];
}

/**
 * What a shell invocation runs: the script of `sh -c 'script'` (its text; undefined when only known at run
 * time), "file" for `sh script.sh` (a program, like any other), or "stdin" when it reads its commands from
 * standard input (`bash <<< "rm x"`, `… | sh`), which the command line does not show.
 */
function shellScript(command: SimpleCommand, start: number): string | undefined | "file" | "stdin" {
  const { words, literals } = command;
  let hasFlag = false;
  let readsStdin = false;
  let p = start + 1;
  for (; p < words.length && /^[-+]/.test(words[p]!); p++) {
    if (words[p] === "--") {
      p++;
      break;
    }
    if (words[p] === "-s" || words[p] === "-") readsStdin = true;
    if (SHELL_COMMAND_FLAG.test(words[p]!)) hasFlag = true;
    if (SHELL_OPTION_WITH_ARGUMENT.test(words[p]!)) p++;
  }
  if (hasFlag) return p < words.length ? literals[p] : "stdin";
  return readsStdin || p >= words.length || isStream(literals[p]) ? "stdin" : "file";
}

/** A script argument that is a stream rather than a file (or only known at run time). */
function isStream(script: string | undefined): boolean {
  return script === undefined || STREAM_FILE.test(script);
}

/** `env -S 'cmd args'` / `--split-string`: env splits that string into the command it runs. */
function envSplitString(command: SimpleCommand, start: number): string | undefined | null {
  const { words, literals } = command;
  for (let p = start + 1; p < words.length; p++) {
    const word = words[p]!;
    if (word === "-S" || word === "--split-string") return literals[p + 1];
    if (word.startsWith("--split-string=")) return literals[p]?.slice("--split-string=".length);
    if (word.startsWith("-S") && word.length > 2) return literals[p]?.slice(2);
    if (!word.startsWith("-") && !word.includes("=")) break;
  }
  return null;
}

/** What deny and ask rules see of one simple command. */
interface RestrictiveView {
  /** Spellings of every command it runs: without assignments, through wrappers, without leading options. */
  texts: Set<string>;
  writes: string[];
  reads: string[];
  /** Why part of what it runs cannot be seen (`eval` after a wrapper, `sh -c "$x"`), if so. */
  hidden?: string;
}

function restrictiveView(command: SimpleCommand, shell: Shell, view: RestrictiveView, depth = 0): void {
  view.texts.add(commandText(command));
  view.texts.add(commandText(command, () => false));
  view.writes.push(...command.writes);
  view.reads.push(...command.reads);
  const { words } = command;
  const code = [...command.assignments.map((a) => a.text), ...words].find((w) => SHELL_CODE_VARIABLE.test(w));
  if (code)
    view.hidden ??= `${code.split("=")[0]} makes a shell started later run code the line does not show`;
  const seen = new Set<number>();
  const visit = (start: number) => {
    if (start >= words.length || seen.has(start)) return;
    seen.add(start);
    // A wrapped program whose name is built at run time (`command $X`, `env {rm,x}`) cannot be matched.
    if (start > 0 && (command.literals[start] === undefined || EXPANDING_WORD.test(words[start]!)))
      view.hidden ??= `the program ${words[start]} that \`${words[0]}\` runs is only known at run time`;
    const name = words[start]!.slice(words[start]!.lastIndexOf("/") + 1);
    const ends = optionEnds(words, start + 1);
    for (const end of ends) {
      view.texts.add([words[start], ...words.slice(end)].join(" "));
      view.texts.add([name, ...words.slice(end)].join(" "));
    }
    if (WRAPPERS.has(name)) for (const end of ends) visit(end);
    if (WRAPPERS_WITH_OPERAND.has(name)) for (const end of ends) visit(end + 1);
    if (HIDDEN_RUNNERS.has(name)) view.hidden ??= `\`${name}\` runs a command built at run time`;
    if (SOURCE_COMMANDS.has(name) && isStream(command.literals[start + 1]))
      view.hidden ??= `\`${name}\` runs commands read from a stream, which the command line does not show`;
    if (name === "find") {
      for (let p = start + 1; p < words.length; p++) if (FIND_ACTIONS.has(words[p]!)) visit(p + 1);
    }
    if (SHELLS.has(name) || SCRIPT_RUNNERS.has(name)) {
      const script = shellScript(command, start);
      if (script === "stdin") {
        if (SHELLS.has(name))
          view.hidden ??= `\`${name}\` reads the commands it runs from standard input or a stream`;
      } else if (script !== "file") inspectScript(script, shell, view, depth);
    }
    if (name === "env") {
      const split = envSplitString(command, start);
      if (split !== null) inspectScript(split, shell, view, depth);
    }
  };
  visit(0);
}

function inspectScript(script: string | undefined, shell: Shell, view: RestrictiveView, depth: number): void {
  const split = script !== undefined && depth < MAX_SHELL_DEPTH ? splitBash(script) : undefined;
  if (!split?.ok) {
    view.hidden ??= `a shell's -c script ${split ? `cannot be split (${split.reason})` : "is only known at run time"}`;
    return;
  }
  for (const inner of split.commands) restrictiveView(inner, shell, view, depth + 1);
}

function allowText(command: SimpleCommand): string {
  if (setsOnlyShellVariables(command)) return "";
  return commandText(command, (name) => !SAFE_ENV_VARS.has(name));
}

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
    ev.find(behavior, (rule, entry) => ev.pathRuleMatches(rule, entry, input.toolName, access, view));
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
