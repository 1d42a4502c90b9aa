import { createHash } from "node:crypto";
import { chmodSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { createToolContext, noteSessionWritable } from "../context.js";
import type { McpClientInfo, ToolContext } from "../core/context.js";
import type { Host } from "../core/host.js";
import type { McpManager } from "../core/mcp-manager.js";
import type { PermissionRuleEntry } from "../core/permission.js";
import { Session } from "../core/session.js";
import { atomicWrite } from "../fs/atomic-write.js";
import { canonicalPath } from "../fs/canonical.js";
import { resolveServers } from "../mcp/config.js";
import { McpClientManager } from "../mcp/manager.js";
import { loadSettings, readJsonFile } from "../settings/load.js";
import type { Settings } from "../settings/types.js";
import { type ContextFlags, checkRuleFlags, checkWorkingDir } from "./options.js";

/** Session state names the files read and the rules granted: nobody else's business. */
const SESSION_FILE_MODE = 0o600;

/** Where named sessions keep their state: CC_TOOLS_STATE_DIR, else $XDG_STATE_HOME/cc-tools, else ~/.local/state/cc-tools. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CC_TOOLS_STATE_DIR) return resolve(env.CC_TOOLS_STATE_DIR);
  const base = env.XDG_STATE_HOME ? resolve(env.XDG_STATE_HOME) : join(homedir(), ".local", "state");
  return join(base, "cc-tools");
}

/**
 * A named session is kept per workspace: its grants, shell directory and files read belong to the project
 * they were made in, so `--session work` in another checkout starts clean.
 */
export function sessionPaths(name: string, workingDir: string) {
  // The real path, so a workspace reached through a symlink is the same workspace.
  const real = canonicalPath(workingDir, "/");
  const workspace = `${basename(real) || "root"}-${createHash("sha256").update(real).digest("hex").slice(0, 12)}`;
  const dir = join(stateDir(), "sessions", name, workspace);
  return { dir, file: join(dir, "state.json") };
}

/** A named session restored from disk, or a fresh anonymous one. */
export function openSession(name: string | undefined, workingDir: string): Session {
  // A one-shot run prints results that may name files in the session dir (spilled output): they outlive
  // the process, until a later process sweeps them (src/core/session.ts).
  if (!name) return new Session({ keepFiles: true });
  const { dir, file } = sessionPaths(name, workingDir);
  const saved = readJsonFile(file) as Record<string, unknown> | undefined;
  return new Session({ id: name, dir: join(dir, "files"), saved });
}

/**
 * Saves a named session's state atomically (a crash leaves the previous state, never half of one). The
 * state names files and commands of the user's project, so it is theirs alone: 0600 in 0700 directories.
 */
export async function saveSession(
  name: string | undefined,
  workingDir: string,
  session: Session,
): Promise<void> {
  if (!name) return;
  const { dir, file } = sessionPaths(name, workingDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // made by an older version with the default mode
  const text = `${JSON.stringify(session.snapshot(), null, 2)}\n`;
  await atomicWrite(file, new TextEncoder().encode(text), { mode: SESSION_FILE_MODE });
}

function cliRules(flags: ContextFlags, root: string): PermissionRuleEntry[] {
  checkRuleFlags(flags);
  const source = { scope: "cli" as const, root };
  return [
    ...(flags.deny ?? []).map((rule) => ({ rule, behavior: "deny" as const, source })),
    ...(flags.allow ?? []).map((rule) => ({ rule, behavior: "allow" as const, source })),
  ];
}

/**
 * The workspace's MCP servers (.mcp.json, settings mcpServers) behind a manager, or undefined when none are
 * configured. Nothing connects until a caller asks (`connect()`, or a resource tool).
 */
export function mcpManagerFor(workingDir: string, config: Settings): McpManager | undefined {
  // Its servers may start before any session's context exists: their programs are looked up outside the
  // places a sandboxed command writes, which must be known by then.
  noteSessionWritable(config, resolve(workingDir));
  const servers = resolveServers(config);
  return servers.length > 0 ? new McpClientManager(servers, { cwd: workingDir }) : undefined;
}

/** Builds the ToolContext a CLI command runs tools in: settings from the workspace, flags on top. */
export function contextFromFlags(
  flags: ContextFlags,
  extra: {
    session?: Session;
    /** Who answers questions; by default nobody (asks become denials that name the rule). */
    host?: Host;
    /** A manager shared between contexts (the MCP server's sessions); by default one is made per context. */
    mcpManager?: McpManager;
    /** The MCP client the tools are served to (`cc-tools mcp`). */
    mcpClient?: McpClientInfo;
  } = {},
): ToolContext {
  const workingDir = checkWorkingDir(flags.cwd);
  const config = loadSettings(workingDir);
  return createToolContext({
    workingDir,
    config,
    mcpManager: "mcpManager" in extra ? extra.mcpManager : mcpManagerFor(workingDir, config),
    session: extra.session,
    permissionMode: flags.permissionMode,
    host: extra.host,
    rules: cliRules(flags, workingDir),
    mcpClient: extra.mcpClient,
  });
}
