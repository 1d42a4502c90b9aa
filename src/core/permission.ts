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
}

export interface PermissionDecision {
  behavior: RuleBehavior;
  /** Why, in words for the model and user ("denied by rule Bash(rm:*) in .claude/settings.json"). */
  reason: string;
  /** The rule that decided, when one did. */
  rule?: PermissionRuleEntry;
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
  workingDir: string;
}

export type PermissionAnswer =
  | { behavior: "allow"; scope: "once" | "session" | "always" }
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
