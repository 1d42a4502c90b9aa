import { homedir } from "node:os";
import { resolve } from "node:path";
import type { McpClientInfo, ToolContext } from "./core/context.js";
import { CostTracker } from "./core/cost.js";
import { createHost, type Host, HostCapability } from "./core/host.js";
import type { McpManager } from "./core/mcp-manager.js";
import { expandTilde, resolveAgainst } from "./core/paths.js";
import type { PermissionHandler, PermissionRuleEntry } from "./core/permission.js";
import type { PermissionMode } from "./core/permission-level.js";
import { Session } from "./core/session.js";
import type { Settings } from "./core/settings.js";
import { type AnyTool, assertZod4Schema } from "./core/tool.js";
import type { ToolSet } from "./core/toolset.js";
import { workspaceSlot } from "./core/workspace.js";
import { decideWithHost, permissionStateSlot } from "./permissions/decide.js";
import { autoHandler } from "./permissions/handlers.js";
import { builtinTools } from "./registry.js";
import { noteSandboxWritable, SANDBOX_CACHE_DIRS } from "./sandbox/host-programs.js";
import { cronSlot } from "./schedule/scheduler.js";
import { emptySettings } from "./settings/types.js";

/**
 * The composition root: where the core's interfaces meet the permission engine, the built-in tools and a
 * host. Every host (library, CLI, MCP server, agent loop) builds its contexts here.
 */

export interface ToolContextOptions {
  workingDir: string;
  session?: Session;
  permissionMode?: PermissionMode;
  /** What the host can do for tools; by default one with nobody to ask (asks become denials naming the rule). */
  host?: Host;
  /** Shorthand for a host that only answers permission questions through this handler. */
  permissionHandler?: PermissionHandler;
  mcpManager?: McpManager;
  /** Your own tools, run through the same pipeline as the built-ins; a name already taken is an error. */
  tools?: AnyTool[];
  /** The built-in tools to start from (an agent type's selection); every built-in by default. */
  toolSet?: ToolSet;
  /** The sub-agent type this context serves; rules scoped to agent types match against it. */
  agentType?: string;
  config?: Settings;
  costTracker?: CostTracker;
  /** Extra rules (CLI `--allow` / `--deny`), added with scope "cli". */
  rules?: PermissionRuleEntry[];
  /**
   * MCP tools past this many are deferred: left out of the definitions sent up front, found and loaded
   * with ToolSearch. Unset: every MCP tool is sent.
   */
  deferMcpToolsAfter?: number;
  /** The MCP client the tools are served to, when they are. */
  mcpClient?: McpClientInfo;
}

/**
 * Your own tools must not take a built-in's name or alias (the built-in would win every lookup while the
 * tool list showed both), nor each other's, and must have zod 4 schemas. Each mistake is an error here,
 * where it is made, rather than a tool that silently never runs.
 */
function checkOwnTools(tools: readonly AnyTool[], builtins: ToolSet): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    for (const name of [tool.name, ...tool.aliases]) {
      const builtin = builtins.get(name);
      if (builtin) {
        throw new TypeError(
          `createToolContext: your tool "${tool.name}" uses the name "${name}" of the built-in tool ${builtin.name}, which would shadow it. Give your tool another name.`,
        );
      }
      if (seen.has(name)) {
        throw new TypeError(
          `createToolContext: two of your tools are named "${name}"; names must be unique.`,
        );
      }
      seen.add(name);
    }
    assertZod4Schema(tool.inputSchema, tool.name);
  }
}

/** A host made of one permission handler; it reaches a person when the handler says it does. */
export function hostFromHandler(handler: PermissionHandler): Host {
  return createHost({ permissions: handler, interactive: handler.interactive ?? false }, autoHandler);
}

const additionalDirectoriesOf = (config: Settings, baseDir: string) =>
  config.additionalDirectories.map((d) => resolve(baseDir, expandTilde(d, homedir())));

/**
 * Notes where a sandboxed command of a session with these settings can write, before any command runs:
 * programs this process runs outside the sandbox (the MCP servers it starts at once included) are never
 * taken from there (sandbox/host-programs.ts).
 */
export function noteSessionWritable(config: Settings, baseDir: string): void {
  if (config.sandbox.enabled === false) return;
  const { allowWrite } = config.sandbox.filesystem;
  const dirs = [baseDir, ...additionalDirectoriesOf(config, baseDir), ...allowWrite];
  noteSandboxWritable([...dirs, ...SANDBOX_CACHE_DIRS]);
}

export function createToolContext(options: ToolContextOptions): ToolContext {
  const builtins = options.toolSet ?? builtinTools();
  checkOwnTools(options.tools ?? [], builtins);
  const baseDir = resolve(options.workingDir);
  const session = options.session ?? new Session();
  const config = options.config ?? emptySettings(baseDir);
  const state = session.get(permissionStateSlot);
  const workspace = session.get(workspaceSlot);
  const baseMode: PermissionMode = options.permissionMode ?? config.defaultMode ?? "default";
  const host =
    options.host ??
    (options.permissionHandler ? hostFromHandler(options.permissionHandler) : createHost({}, autoHandler));
  const cliRules = options.rules ?? [];
  const additionalDirectories = additionalDirectoriesOf(config, baseDir);

  noteSessionWritable(config, baseDir);

  // Durable cron jobs of a restored session run again once a host that can run prompts serves it.
  if (host.supports(HostCapability.Prompts)) session.get(cronSlot).attach(host);

  const context: ToolContext = {
    get workingDir() {
      return workspace.workingDir ?? baseDir;
    },
    get permissionMode() {
      return state.mode ?? baseMode;
    },
    setPermissionMode(mode) {
      state.mode = mode;
    },
    host,
    tools: builtins.with(options.tools ?? []),
    agentType: options.agentType,
    deferMcpToolsAfter: options.deferMcpToolsAfter,
    costTracker: options.costTracker ?? new CostTracker(),
    // Read when used: a session's id is made on first use (core/session.ts).
    get sessionId() {
      return session.id;
    },
    session,
    mcpManager: options.mcpManager,
    config,
    additionalDirectories,
    mcpClient: options.mcpClient,
    resolvePath(path) {
      return resolveAgainst(path, context.workingDir);
    },
    rules() {
      return [...config.rules, ...cliRules, ...state.granted];
    },
    addRules(entries) {
      state.granted.push(...entries);
    },
    checkPermission(tool, input, signal, hook) {
      return context.decider(context, tool, input, signal ?? new AbortController().signal, hook);
    },
    decider: decideWithHost,
  };
  return context;
}
