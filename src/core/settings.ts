import type { PermissionRuleEntry } from "./permission.js";
import type { PermissionMode } from "./permission-level.js";

/**
 * The shape of Claude Code's settings files and of their merged view. Loading and merging them is
 * src/settings' job; the core names the shapes every tool sees through `ctx.config`.
 */

/** Claude Code's hook events; each has its own payload (see src/hooks/events.ts). */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "Notification",
  "PreCompact",
] as const;

export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's hook format: `hooks.PreToolUse[] = { matcher, hooks: [{ type: "command", command, timeout }] }`. */
export interface HookCommand {
  type: "command";
  command: string;
  /** Seconds. */
  timeout?: number;
}

export interface HookMatcher {
  /** Tool name, `A|B`, a regex, or empty / `*` for every tool. */
  matcher?: string;
  hooks: HookCommand[];
}

export type McpServerConfig =
  | { type?: "stdio"; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { type: "http" | "sse"; url: string; headers?: Record<string, string> };

/** The settings file format (~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json). */
export interface SettingsFile {
  permissions?: {
    allow?: string[];
    ask?: string[];
    deny?: string[];
    additionalDirectories?: string[];
    defaultMode?: PermissionMode;
  };
  hooks?: Partial<Record<HookEvent, HookMatcher[]>>;
  env?: Record<string, string>;
  mcpServers?: Record<string, McpServerConfig>;
  [key: string]: unknown;
}

/**
 * Claude Code's `sandbox` block, merged over every settings file: booleans from the last file that sets
 * them, lists concatenated. Paths are absolute here (`//x` and `/x` absolute, `~/x` under home, others
 * under the directory that holds the file's .claude/). See docs/SANDBOX.md.
 */
export interface SandboxSettings {
  /** Undefined: on wherever the platform's sandbox works. */
  enabled?: boolean;
  /** Refuse to run commands when the sandbox cannot be used, instead of warning once. */
  failIfUnavailable?: boolean;
  /** Default true: a sandboxed command runs without asking in default and acceptEdits modes. */
  autoAllowBashIfSandboxed?: boolean;
  /** Default true: `dangerouslyDisableSandbox` is honoured (the command then goes through the rules). */
  allowUnsandboxedCommands?: boolean;
  /** Commands (first words, or `Bash`-rule patterns like `docker:*`) that always run outside the sandbox. */
  excludedCommands: string[];
  /** cc-tools' own: run hook commands inside the sandbox too (default false: hooks are the user's). */
  sandboxHooks?: boolean;
  network: { allowedDomains: string[]; deniedDomains: string[] };
  filesystem: { allowWrite: string[]; denyWrite: string[]; denyRead: string[]; allowRead: string[] };
  /** Keys of Claude Code's block that cc-tools reads but does not act on, for `cc-tools sandbox status`. */
  ignoredKeys: string[];
}

/** The merged view of every settings file that applies to a project. */
export interface Settings {
  /** Every rule with where it came from, in file order (user, project, local). */
  rules: PermissionRuleEntry[];
  additionalDirectories: string[];
  defaultMode?: PermissionMode;
  /** Matchers per event; an event no file configures may be absent. */
  hooks: Partial<Record<HookEvent, HookMatcher[]>>;
  env: Record<string, string>;
  mcpServers: Record<string, McpServerConfig>;
  sandbox: SandboxSettings;
  /** The merged raw settings, for keys other modules read (later files win, lists concatenate). */
  raw: SettingsFile;
  /** The files that were found and read, in merge order. */
  files: string[];
  /** The project root (where .claude/ lives) the settings were loaded for. */
  projectDir: string;
}
