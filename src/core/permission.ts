import type { PermissionLevel, PermissionMode } from "./permission-level.js";
import type { PermissionSubject } from "./tool.js";

/**
 * The public vocabulary of permissions: rules as settings write them, decisions, and the question a host
 * is asked. The engine that produces decisions lives in src/permissions; the core only names the shapes.
 */

export type RuleBehavior = "allow" | "ask" | "deny";

/** Where a rule came from: path rules starting with `/` are relative to `root` (the settings file's project). */
export interface RuleSource {
  scope: "user" | "project" | "local" | "cli" | "session";
  /** The settings file the rule was read from, if any. */
  file?: string;
  /** The directory `/path` rules are relative to: the project root for project settings, home for user. */
  root: string;
}

export interface PermissionRuleEntry {
  /** The rule as written: `Bash(npm run test:*)`, `Read(./secrets/**)`, `mcp__github__*`. */
  rule: string;
  behavior: RuleBehavior;
  source: RuleSource;
  /**
   * The sub-agent type the rule is for (`Explore`, `Plan`, a custom agent's name): it applies only to
   * calls made by that agent. Without it the rule applies to every agent and the main session.
   */
  agent?: string;
}

export interface PermissionDecision {
  behavior: RuleBehavior;
  /** Why, in words for the model and user ("denied by rule Bash(rm:*) in .claude/settings.json"). */
  reason: string;
  /** The rule that decided, when one did. */
  rule?: PermissionRuleEntry;
  /**
   * The trace: every rule that matched the call (or a part of its command), deciding or not, in the
   * order they were checked. Set by evaluatePermission.
   */
  matchedRules?: PermissionRuleEntry[];
  /**
   * True when a person was asked about this very call (its arguments shown) and allowed it; not set when a
   * rule, the mode, a hook or an MCP client's own consent allowed it.
   */
  approvedByUser?: boolean;
}

/** What a host is asked when the decision is `ask`. */
export interface PermissionRequest {
  toolName: string;
  input: unknown;
  level: PermissionLevel;
  subject: PermissionSubject;
  mode: PermissionMode;
  /** Why the call needs approval. */
  reason: string;
  /**
   * The narrowest allow rules that together allow this call (one per part of a compound command),
   * each checked by the evaluator; empty when no rule can (Dangerous tools, commands too complex to split).
   */
  suggestedRules: string[];
  /**
   * A broader alternative to suggestedRules for a shell command: each command rule replaced by its prefix
   * rule (`Bash(npm run dev:*)`), checked to allow the call; empty when no safe prefix exists.
   */
  prefixRules: string[];
  workingDir: string;
}

export type PermissionAnswer =
  | {
      behavior: "allow";
      scope: "once" | "session" | "always";
      /** Which rules a session or always answer remembers: suggestedRules (the default) or prefixRules. */
      remember?: "exact" | "prefix";
    }
  | { behavior: "deny"; message?: string };

/** Asks a person (or a policy) about one call. Tools never prompt themselves; they go through this. */
export interface PermissionHandler {
  readonly name: string;
  /** True when the handler reaches a person (a terminal prompt), not a policy (allow-all, deny-all). */
  readonly interactive?: boolean;
  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer>;
}

/** What a PreToolUse hook said about permission, with its reason. */
export interface HookPermission {
  decision: "allow" | "ask";
  reason: string;
}
