import type { PermissionRuleEntry } from "../core/permission.js";
import type { PermissionLevel, PermissionMode } from "../core/permission-level.js";
import type { PermissionSubject } from "../core/tool.js";

export type {
  HookPermission,
  PermissionAnswer,
  PermissionDecision,
  PermissionHandler,
  PermissionRequest,
  PermissionRuleEntry,
  RuleBehavior,
  RuleSource,
} from "../core/permission.js";

/** Everything a decision depends on; evaluatePermission is a pure function of it (plus realpath). */
export interface EvaluationInput {
  toolName: string;
  level: PermissionLevel;
  subject: PermissionSubject;
  mode: PermissionMode;
  rules: readonly PermissionRuleEntry[];
  workingDir: string;
  additionalDirectories: readonly string[];
  homeDir: string;
  /** The sub-agent type making the call; undefined for the main session. Picks the agent-scoped rules. */
  agentType?: string;
  /** More files that decide what runs (the hook scripts settings name): writing one is a control write. */
  controlFiles?: readonly string[];
}
