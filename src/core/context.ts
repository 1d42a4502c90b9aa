import type { CostTracker } from "./cost.js";
import type { Host } from "./host.js";
import type { McpManager } from "./mcp-manager.js";
import { resolveAgainst } from "./paths.js";
import type { HookPermission, PermissionDecision, PermissionRuleEntry } from "./permission.js";
import type { PermissionMode } from "./permission-level.js";
import type { Session } from "./session.js";
import type { Settings } from "./settings.js";
import type { AnyTool } from "./tool.js";
import type { ToolSet } from "./toolset.js";

export type { HookPermission } from "./permission.js";

/** Progress of a long call, forwarded to MCP clients that asked for it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Decides a call: rules and mode first, then the host when they say ask. Supplied by the composition root
 * (src/context.ts, with src/permissions/decide.ts), so the core does not depend on the permission engine.
 */
export type PermissionDecider = (
  ctx: ToolContext,
  tool: AnyTool,
  input: unknown,
  signal: AbortSignal,
  hook: HookPermission | undefined,
) => Promise<PermissionDecision>;

/** Runtime state every tool call sees. One per session (or sub-agent); the executor derives one per call. */
export interface ToolContext {
  /**
   * The workspace root: relative paths resolve against it; permissions treat it as inside. Session state,
   * so EnterWorktree can move it (see core/workspace.ts).
   */
  readonly workingDir: string;
  /** The current permission mode; setPermissionMode changes it for the rest of the session. */
  readonly permissionMode: PermissionMode;
  setPermissionMode(mode: PermissionMode): void;
  /** What the host can do for tools: ask a person, approve plans, run prompts, a model. */
  readonly host: Host;
  /** The tools this context offers (built-ins for its agent type plus the embedder's own); MCP tools come from mcpManager. */
  readonly tools: ToolSet;
  /** The sub-agent type this context serves (`Explore`, a custom agent), undefined for the main conversation. */
  readonly agentType: string | undefined;
  /** MCP tools past this many are deferred (left for ToolSearch to load); undefined sends them all. */
  readonly deferMcpToolsAfter?: number;
  readonly costTracker: CostTracker;
  readonly sessionId: string;
  readonly session: Session;
  readonly mcpManager: McpManager | undefined;
  /** Merged settings (rules, hooks, env, MCP servers). */
  readonly config: Settings;
  /** Directories outside workingDir that count as inside for permissions. */
  readonly additionalDirectories: readonly string[];
  /** Set when the tools are served to an MCP client (see McpClientInfo). */
  readonly mcpClient: McpClientInfo | undefined;
  /** Resolves a user- or model-supplied path against workingDir (and `~`). */
  resolvePath(path: string): string;
  /**
   * Decides a call: rules and mode first, then the host when they say ask. Never throws. `hook` is a
   * PreToolUse hook's answer: `allow` skips the question but not deny or ask rules; `ask` asks even
   * when the rules would allow (never past a deny rule).
   */
  checkPermission(
    tool: AnyTool,
    input: unknown,
    signal?: AbortSignal,
    hook?: HookPermission,
  ): Promise<PermissionDecision>;
  /** Adds rules for the rest of the session (CLI flags, "allow for this session" answers). */
  addRules(entries: PermissionRuleEntry[]): void;
  /** Every rule in force: settings, CLI flags and session grants. */
  rules(): readonly PermissionRuleEntry[];
  /** The decision flow this context (and every context forked from it) uses. */
  readonly decider: PermissionDecider;
}

/** The MCP client the tools are served to: it has tools of its own, and may ask its user before each call. */
export interface McpClientInfo {
  /**
   * The client asked its user before sending each call, so an ask about what the call visibly does inside
   * the workspace is answered by that (src/permissions/client-consent.ts). Off for `--permission-mode`.
   */
  readonly approvesCalls: boolean;
}

/** The per-call view: the session context plus this call's signal, id and progress channel. */
export interface ToolCallContext extends ToolContext {
  readonly signal: AbortSignal;
  readonly toolUseId: string;
  /**
   * True when a person was asked about this call and allowed it (PermissionDecision.approvedByUser): a
   * tool may then do what only that call's own approval covers (WebFetch reaching the private host it
   * named), without a standing rule.
   */
  readonly approvedByUser?: boolean;
  reportProgress(progress: Progress): void;
}

/** What a derived context changes; everything else is read through from its parent. */
export interface ForkOptions {
  /** Its own session: read-state, shell directory, task store (a sub-agent's own conversation). */
  session?: Session;
  /** Its own mode; setPermissionMode on the fork then changes only the fork's. */
  permissionMode?: PermissionMode;
  workingDir?: string;
  tools?: ToolSet;
  host?: Host;
  agentType?: string;
}

/**
 * A context derived from `parent` (a sub-agent, a worktree, one call): the fields given are its own, the
 * rest are read through, so a grant or a mode change in the parent is seen by a fork that did not override it.
 */
export function forkContext(parent: ToolContext, options: ForkOptions): ToolContext {
  let ownMode = options.permissionMode;
  const fork: ToolContext = {
    get workingDir() {
      return options.workingDir ?? parent.workingDir;
    },
    get permissionMode() {
      return ownMode ?? parent.permissionMode;
    },
    setPermissionMode(mode) {
      if (ownMode !== undefined) ownMode = mode;
      else parent.setPermissionMode(mode);
    },
    host: options.host ?? parent.host,
    tools: options.tools ?? parent.tools,
    agentType: "agentType" in options ? options.agentType : parent.agentType,
    deferMcpToolsAfter: parent.deferMcpToolsAfter,
    costTracker: parent.costTracker,
    get sessionId() {
      return options.session?.id ?? parent.sessionId;
    },
    session: options.session ?? parent.session,
    mcpManager: parent.mcpManager,
    config: parent.config,
    additionalDirectories: parent.additionalDirectories,
    mcpClient: parent.mcpClient,
    resolvePath(path) {
      return options.workingDir === undefined
        ? parent.resolvePath(path)
        : resolveAgainst(path, fork.workingDir);
    },
    checkPermission(tool, input, signal, hook) {
      return fork.decider(fork, tool, input, signal ?? new AbortController().signal, hook);
    },
    addRules: (entries) => parent.addRules(entries),
    rules: () => parent.rules(),
    decider: parent.decider,
  };
  return fork;
}

/** The per-call context of one tool call. */
export function callContext(
  ctx: ToolContext,
  call: {
    signal: AbortSignal;
    toolUseId: string;
    approvedByUser?: boolean;
    reportProgress: (progress: Progress) => void;
  },
): ToolCallContext {
  return Object.assign(forkContext(ctx, {}), call);
}
