import { resolve } from "node:path";
import { canonicalPath, expandTilde, isWithin } from "../fs/canonical.js";
import { type ControlTargets, controlTargets, isControlFile, isControlTarget } from "./control-files.js";
import { type TableLevel, tableCell } from "./decision-table.js";
import { compilePathPattern, type PathPattern } from "./paths.js";
import { coversPathAccess, hostMatches, mcpServerOf, type ParsedRule, parseRule } from "./rules.js";
import type { EvaluationInput, PermissionRuleEntry, RuleBehavior } from "./types.js";

/** A rule as written and as parsed. */
export interface LoadedRule {
  entry: PermissionRuleEntry;
  rule: ParsedRule;
}

/**
 * A path as the call wrote it (resolved, links untouched) and where it really leads. Allow rules see only
 * the real target; deny and ask rules match either, so no spelling of a path slips past them.
 */
export interface PathView {
  canonical: string;
  lexical: string;
}

/**
 * Valid rules by behavior, those scoped to another agent type left out; invalid ones are skipped here and
 * reported by validateRule where rules load.
 */
function loadRules(
  entries: readonly PermissionRuleEntry[],
  agentType: string | undefined,
): Record<RuleBehavior, LoadedRule[]> {
  const loaded: Record<RuleBehavior, LoadedRule[]> = { deny: [], ask: [], allow: [] };
  for (const entry of entries) {
    if (entry.agent !== undefined && entry.agent !== agentType) continue;
    const parsed = parseRule(entry.rule);
    if (parsed.ok) loaded[entry.behavior].push({ entry, rule: parsed.rule });
  }
  return loaded;
}

export function describeRule(entry: PermissionRuleEntry): string {
  const from =
    entry.source.file ?? (entry.source.scope === "cli" ? "the command line" : `${entry.source.scope} rules`);
  return `the ${entry.behavior} rule ${entry.rule} (${from})`;
}

/**
 * One decision's view of its input: the rules in force, parsed (once per text, see parseRule) and with
 * their path patterns compiled once for the whole evaluation; the workspace; and how paths are seen.
 */
export class Evaluation {
  readonly rules: Record<RuleBehavior, LoadedRule[]>;
  /** The trace: every rule found to match this call, in the order they were checked. */
  readonly matched = new Set<PermissionRuleEntry>();
  private readonly workspace: string[];
  /** Compiled path patterns per rule: `[links resolved, as written]` for deny/ask, `[as written]` for allow. */
  private readonly patterns = new Map<LoadedRule, PathPattern[]>();
  /** Where linked control paths lead; looked up on the first write judged. */
  private targets: ControlTargets | undefined;

  constructor(readonly input: EvaluationInput) {
    this.rules = loadRules(input.rules, input.agentType);
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
   * Inside for a write: in the workspace, and not one of the files that decide what may run (see
   * isControlFile). A write there is judged as if outside: acceptEdits asks.
   */
  insideForWrite(view: PathView): boolean {
    return this.inside(view) && !this.isControl(view);
  }

  /**
   * Whether a path decides what may run: a control file by name (either spelling: a symlinked .git still
   * says .git), one reached through a linked .claude, .git or .mcp.json, or a hook script settings name.
   */
  isControl(view: PathView): boolean {
    const lexicalRoots = [this.input.workingDir, ...this.input.additionalDirectories];
    this.targets ??= controlTargets(
      [...new Set([...lexicalRoots, ...this.workspace])],
      this.input.controlFiles ?? [],
    );
    const targets = this.targets;
    return (
      this.workspace.some((dir) => isControlFile(view.canonical, dir)) ||
      lexicalRoots.some((dir) => isControlFile(view.lexical, dir)) ||
      isControlTarget(view.canonical, targets) ||
      isControlTarget(view.lexical, targets)
    );
  }

  /** The workspace root (canonical) a path is in, if any. */
  workspaceOf(canonical: string): string | undefined {
    return this.workspace.find((dir) => isWithin(canonical, dir));
  }

  /**
   * Whether an allow rule may allow writing a control file: only one that names the file itself (a path
   * rule without wildcards). `Edit`, `Edit(./**)` or `Write(.claude/*)` never reach settings, hooks,
   * .mcp.json or git's files.
   */
  namesFile(loaded: LoadedRule): boolean {
    return loaded.rule.kind === "path" && !/[*?[]/.test(loaded.rule.spec);
  }

  /** The table's answer for this call's mode and level. */
  cell(inside: boolean, level: TableLevel = this.input.level as TableLevel): RuleBehavior {
    return tableCell(this.input.mode, level, inside);
  }

  /** Every rule of `behavior` that passes `test`, each recorded in the trace. */
  all(behavior: RuleBehavior, test: (loaded: LoadedRule) => boolean): LoadedRule[] {
    const found = this.rules[behavior].filter(test);
    for (const loaded of found) this.matched.add(loaded.entry);
    return found;
  }

  /** The first rule of `behavior` that passes `test`; every one that does is recorded in the trace. */
  find(behavior: RuleBehavior, test: (loaded: LoadedRule) => boolean): LoadedRule | undefined {
    return this.all(behavior, test)[0];
  }

  private compiled(loaded: LoadedRule, spec: string): PathPattern[] {
    let patterns = this.patterns.get(loaded);
    if (!patterns) {
      const { entry } = loaded;
      const bases = {
        workingDir: this.input.workingDir,
        root: entry.source.root,
        homeDir: this.input.homeDir,
      };
      patterns =
        entry.behavior === "allow"
          ? [compilePathPattern(spec, bases, false)]
          : [compilePathPattern(spec, bases, true), compilePathPattern(spec, bases, false)];
      this.patterns.set(loaded, patterns);
    }
    return patterns;
  }

  pathRuleMatches(loaded: LoadedRule, toolName: string, access: "read" | "write", view: PathView): boolean {
    const { rule, entry } = loaded;
    if (rule.kind !== "tool" && rule.kind !== "path" && rule.kind !== "specifier") return false;
    if (!coversPathAccess(rule.tool, entry.behavior, toolName, access)) return false;
    if (rule.kind === "tool") return true;
    const patterns = this.compiled(loaded, rule.spec);
    if (entry.behavior === "allow") return patterns[0]!.matches(view.canonical);
    return [view.canonical, view.lexical].some((path) => patterns.some((pattern) => pattern.matches(path)));
  }

  /** The first rule of `behavior` about a file access. */
  findPathRule(behavior: RuleBehavior, access: "read" | "write", view: PathView): LoadedRule | undefined {
    return this.find(behavior, (loaded) => this.pathRuleMatches(loaded, this.input.toolName, access, view));
  }

  /** Whether a rule applies to a call whose subject is not a command. */
  matchesCall(loaded: LoadedRule, view: PathView | undefined): boolean {
    const { toolName, subject } = this.input;
    const { rule } = loaded;
    if (rule.kind === "mcpServer") return mcpServerOf(toolName) === rule.server;
    if (rule.kind === "tool" && rule.tool === toolName) return true;
    if (subject.kind === "path" && view) return this.pathRuleMatches(loaded, toolName, subject.access, view);
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
