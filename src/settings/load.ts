import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { PermissionRuleEntry, RuleBehavior, RuleSource } from "../core/permission.js";
import { isPermissionMode } from "../core/permission-level.js";
import { validateRule } from "../permissions/rules.js";
import { isPlaceholder } from "../sandbox/placeholder.js";
import { locateJsonError } from "./json-error.js";
import {
  emptySettings,
  HOOK_EVENTS,
  type HookMatcher,
  type McpServerConfig,
  type SandboxSettings,
  type Settings,
  type SettingsFile,
} from "./types.js";

/** Settings could not be used; the message names the file and where in it. */
export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsError";
  }
}

/** `CLAUDE_CONFIG_DIR` overrides `~/.claude`, as in Claude Code (tests rely on it). */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : join(homedir(), ".claude");
}

export interface SettingsLocation {
  path: string;
  scope: "user" | "project" | "local";
}

/** The settings files that apply to a project, lowest precedence first. */
export function settingsLocations(
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): SettingsLocation[] {
  return [
    { path: join(userConfigDir(env), "settings.json"), scope: "user" },
    { path: join(projectDir, ".claude", "settings.json"), scope: "project" },
    { path: join(projectDir, ".claude", "settings.local.json"), scope: "local" },
  ];
}

/** Line and column of a character offset, for error messages people can act on. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}

/** Reads a JSON file; undefined when it does not exist; a SettingsError naming file and position when malformed. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    // A directory there is the sandbox's stand-in for a control file that does not exist, while a command
    // runs or after a run that was killed before it could remove it (see docs/SANDBOX.md).
    if ((error as NodeJS.ErrnoException).code === "EISDIR" && isPlaceholder(path)) return undefined;
    throw new SettingsError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    const located = locateJsonError(text);
    const detail = located
      ? ` at ${position(text, located.offset)}: ${located.reason}`
      : `: ${(error as Error).message}`;
    throw new SettingsError(`${path} is not valid JSON${detail}. Fix the file or remove it.`);
  }
}

function expectObject(value: unknown, what: string, file: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SettingsError(`${file}: "${what}" must be an object.`);
  }
  return value as Record<string, unknown>;
}

function expectStrings(value: unknown, what: string, file: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new SettingsError(`${file}: "${what}" must be a list of strings.`);
  }
  return value as string[];
}

/** Lists concatenate, objects merge key by key, anything else: the later file wins. */
function mergeRaw(base: SettingsFile, next: SettingsFile): SettingsFile {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(next)) {
    const prev = out[key];
    if (Array.isArray(prev) && Array.isArray(value)) out[key] = [...prev, ...value];
    else if (isPlainObject(prev) && isPlainObject(value))
      out[key] = mergeRaw(prev as SettingsFile, value as SettingsFile);
    else out[key] = value;
  }
  return out as SettingsFile;
}

function isPlainObject(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function applyFile(
  settings: Settings,
  file: SettingsFile,
  location: SettingsLocation,
  projectDir: string,
): void {
  const where = location.path;
  const permissions = expectObject(file.permissions, "permissions", where);
  // `/path` rules are relative to the directory that holds .claude/: the project, or home for user settings.
  const root = location.scope === "user" ? dirname(userConfigDir()) : projectDir;
  const source: RuleSource = { scope: location.scope, file: where, root };
  for (const behavior of ["deny", "ask", "allow"] as RuleBehavior[]) {
    for (const rule of expectStrings(permissions[behavior], `permissions.${behavior}`, where)) {
      // A rule that cannot be parsed would be ignored; for a deny rule that silently allows what the
      // user meant to forbid, so it stops loading instead.
      const problem = validateRule(rule);
      if (problem) throw new SettingsError(`${where}: permissions.${behavior}: ${problem}`);
      settings.rules.push({ rule, behavior, source } satisfies PermissionRuleEntry);
    }
  }
  const dirs = expectStrings(permissions.additionalDirectories, "permissions.additionalDirectories", where);
  settings.additionalDirectories.push(...dirs.map((d) => (d.startsWith("~") ? d : resolve(root, d))));
  if (permissions.defaultMode !== undefined) {
    if (!isPermissionMode(permissions.defaultMode)) {
      throw new SettingsError(
        `${where}: permissions.defaultMode "${String(permissions.defaultMode)}" is not a mode; use default, acceptEdits, plan, bypassPermissions or dontAsk.`,
      );
    }
    settings.defaultMode = permissions.defaultMode;
  }
  const hooks = expectObject(file.hooks, "hooks", where);
  for (const event of HOOK_EVENTS) {
    const list = hooks[event];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new SettingsError(`${where}: "hooks.${event}" must be a list.`);
    for (const [i, entry] of list.entries()) {
      const m = expectObject(entry, `hooks.${event}[${i}]`, where) as Partial<HookMatcher>;
      if (!Array.isArray(m.hooks))
        throw new SettingsError(`${where}: "hooks.${event}[${i}].hooks" must be a list.`);
      (settings.hooks[event] ??= []).push({ matcher: m.matcher, hooks: m.hooks });
    }
  }
  applySandbox(settings.sandbox, file.sandbox, where, root);
  Object.assign(settings.env, expectObject(file.env, "env", where));
  Object.assign(
    settings.mcpServers,
    expectObject(file.mcpServers, "mcpServers", where) as Record<string, McpServerConfig>,
  );
}

/** Keys of Claude Code's sandbox block that are read and acted on, and those accepted but not acted on. */
const SANDBOX_BOOLEANS = [
  "enabled",
  "failIfUnavailable",
  "autoAllowBashIfSandboxed",
  "allowUnsandboxedCommands",
  "sandboxHooks",
] as const;
const SANDBOX_IGNORED = new Set(["enableWeakerNestedSandbox", "ignoreViolations"]);
const NETWORK_IGNORED = new Set([
  "allowUnixSockets",
  "allowAllUnixSockets",
  "allowLocalBinding",
  "httpProxyPort",
  "socksProxyPort",
  "allowManagedDomainsOnly",
]);
const FILESYSTEM_LISTS = ["allowWrite", "denyWrite", "denyRead", "allowRead"] as const;

/**
 * A sandbox path as Claude Code writes it: `//x` and `/x` absolute, `~/x` under home, anything else under
 * the directory that holds the settings file's .claude/ (the project, or home for user settings).
 */
export function resolveSandboxPath(path: string, root: string, home = homedir()): string {
  if (path === "~" || path.startsWith("~/")) return resolve(home, path.slice(2));
  if (isAbsolute(path)) return resolve(path);
  return resolve(root, path);
}

function rejectUnknown(
  block: Record<string, unknown>,
  known: readonly string[],
  ignored: Set<string>,
  what: string,
  where: string,
  out: SandboxSettings,
): void {
  for (const key of Object.keys(block)) {
    if (ignored.has(key)) {
      if (!out.ignoredKeys.includes(`${what}.${key}`)) out.ignoredKeys.push(`${what}.${key}`);
    } else if (!known.includes(key)) {
      // A misspelt key would silently leave the sandbox weaker than the user meant.
      throw new SettingsError(
        `${where}: "${what}.${key}" is not a sandbox setting; known keys: ${known.join(", ")}.`,
      );
    }
  }
}

function applySandbox(out: SandboxSettings, value: unknown, where: string, root: string): void {
  if (value === undefined) return;
  const block = expectObject(value, "sandbox", where);
  rejectUnknown(
    block,
    [...SANDBOX_BOOLEANS, "excludedCommands", "network", "filesystem"],
    SANDBOX_IGNORED,
    "sandbox",
    where,
    out,
  );
  for (const key of SANDBOX_BOOLEANS) {
    const flag = block[key];
    if (flag === undefined) continue;
    if (typeof flag !== "boolean")
      throw new SettingsError(`${where}: "sandbox.${key}" must be true or false.`);
    out[key] = flag;
  }
  out.excludedCommands.push(...expectStrings(block.excludedCommands, "sandbox.excludedCommands", where));
  const network = expectObject(block.network, "sandbox.network", where);
  rejectUnknown(network, ["allowedDomains", "deniedDomains"], NETWORK_IGNORED, "sandbox.network", where, out);
  for (const key of ["allowedDomains", "deniedDomains"] as const) {
    for (const domain of expectStrings(network[key], `sandbox.network.${key}`, where)) {
      if (!/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$|^\[?[0-9a-fA-F:.]+\]?$/.test(domain)) {
        throw new SettingsError(
          `${where}: sandbox.network.${key}: "${domain}" is not a host name; write example.com or *.example.com.`,
        );
      }
      out.network[key].push(domain.toLowerCase().replace(/^\[|\]$/g, ""));
    }
  }
  const filesystem = expectObject(block.filesystem, "sandbox.filesystem", where);
  rejectUnknown(
    filesystem,
    FILESYSTEM_LISTS,
    new Set(["allowManagedReadPathsOnly"]),
    "sandbox.filesystem",
    where,
    out,
  );
  for (const key of FILESYSTEM_LISTS) {
    const paths = expectStrings(filesystem[key], `sandbox.filesystem.${key}`, where);
    out.filesystem[key].push(...paths.map((p) => resolveSandboxPath(p, root)));
  }
}

/**
 * Loads and merges ~/.claude/settings.json, <project>/.claude/settings.json and .claude/settings.local.json
 * (later wins; lists concatenate). A malformed file is an error, never a silent fallback to defaults.
 */
export function loadSettings(projectDir: string, env: NodeJS.ProcessEnv = process.env): Settings {
  const dir = resolve(projectDir);
  const settings = emptySettings(dir);
  for (const location of settingsLocations(dir, env)) {
    const data = readJsonFile(location.path);
    if (data === undefined) continue;
    const file = expectObject(data, "(top level)", location.path) as SettingsFile;
    applyFile(settings, file, location, dir);
    settings.raw = mergeRaw(settings.raw, file);
    settings.files.push(location.path);
  }
  return settings;
}
