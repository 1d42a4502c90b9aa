import type { PermissionMode } from "../core/permission-level.js";
import type { PermissionRuleEntry } from "../permissions/types.js";

export type HookEvent = "PreToolUse" | "PostToolUse";

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
    /** Rules for one sub-agent type each: `{ "Explore": { "deny": ["Bash"] } }`. */
    agents?: Record<string, { allow?: string[]; ask?: string[]; deny?: string[] }>;
  };
  hooks?: Partial<Record<HookEvent, HookMatcher[]>>;
  env?: Record<string, string>;
  /** Credential-like variables (names or `*` globs) that Bash and PowerShell commands still receive. */
  shellEnvPassthrough?: string[];
  mcpServers?: Record<string, McpServerConfig>;
  enabledMcpjsonServers?: string[];
  disabledMcpjsonServers?: string[];
  enableAllProjectMcpServers?: boolean;
  [key: string]: unknown;
}

/** The merged view of every settings file that applies to a project. */
export interface Settings {
  /** Every rule with where it came from, in file order (user, project, local). */
  rules: PermissionRuleEntry[];
  additionalDirectories: string[];
  defaultMode?: PermissionMode;
  hooks: Record<HookEvent, HookMatcher[]>;
  env: Record<string, string>;
  /**
   * Variables (names or `*` globs) that commands the model runs receive although their names mark them as
   * credentials (`shellEnvPassthrough`; see process/env.ts).
   */
  envPassthrough: string[];
  mcpServers: Record<string, McpServerConfig>;
  /**
   * Which project `.mcp.json` servers may start (Claude Code's `enabledMcpjsonServers`,
   * `disabledMcpjsonServers`, `enableAllProjectMcpServers`), read from user and local settings only: a
   * repository's shared .claude/settings.json cannot approve the servers it ships.
   */
  mcpjsonApproval: { enabled: string[]; disabled: string[]; enableAll: boolean };
  /** The merged raw settings, for keys other modules read (later files win, lists concatenate). */
  raw: SettingsFile;
  /** The files that were found and read, in merge order. */
  files: string[];
  /** The project root (where .claude/ lives) the settings were loaded for. */
  projectDir: string;
}

export function emptySettings(projectDir: string): Settings {
  return {
    rules: [],
    additionalDirectories: [],
    hooks: { PreToolUse: [], PostToolUse: [] },
    env: {},
    envPassthrough: [],
    mcpServers: {},
    mcpjsonApproval: { enabled: [], disabled: [], enableAll: false },
    raw: {},
    files: [],
    projectDir,
  };
}
