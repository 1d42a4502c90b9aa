import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { expandTilde } from "../fs/canonical.js";
import { hookScripts } from "../permissions/control-files.js";
import { evaluatePermission } from "../permissions/evaluate.js";
import { autoHandler } from "../permissions/handlers.js";
import { persistRule } from "../permissions/persist.js";
import type { PermissionDecision, PermissionHandler, PermissionRuleEntry } from "../permissions/types.js";
import { emptySettings, type Settings } from "../settings/types.js";
import { CostTracker } from "./cost.js";
import type { McpManager } from "./mcp-manager.js";
import type { PermissionMode } from "./permission-level.js";
import { Session, type SessionSlot } from "./session.js";
import type { AnyTool } from "./tool.js";

/** Progress of a long call, forwarded to MCP clients that asked for it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Runtime state every tool call sees. One per session; the executor derives a ToolCallContext per call. */
export interface ToolContext {
  /** The workspace root: relative paths resolve against it; permissions treat it as inside. */
  readonly workingDir: string;
  /** The current permission mode; setPermissionMode changes it for the rest of the session. */
  readonly permissionMode: PermissionMode;
  setPermissionMode(mode: PermissionMode): void;
  readonly permissionHandler: PermissionHandler;
  readonly costTracker: CostTracker;
  readonly sessionId: string;
  readonly session: Session;
  /** True when nobody can be asked: asks become denials with the reason in the result. */
  readonly nonInteractive: boolean;
  readonly mcpManager: McpManager | undefined;
  /** Tools of the embedding application, found by name beside the built-ins (see registry.findTool). */
  readonly extraTools: readonly AnyTool[];
  /** Merged settings (rules, hooks, env, MCP servers). */
  readonly config: Settings;
  /** Directories outside workingDir that count as inside for permissions. */
  readonly additionalDirectories: readonly string[];
  /** The sub-agent type this context runs (`Explore`, `Plan`, …); undefined for the main session. */
  readonly agentType?: string;
  /** Resolves a user- or model-supplied path against workingDir (and `~`). */
  resolvePath(path: string): string;
  /**
   * Decides a call: rules and mode first, then the handler when they say ask. Never throws. `hook` is a
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
}

/** What a PreToolUse hook said about permission, with its reason. */
export interface HookPermission {
  decision: "allow" | "ask";
  reason: string;
}

/** The per-call view: the session context plus this call's signal, id and progress channel. */
export interface ToolCallContext extends ToolContext {
  readonly signal: AbortSignal;
  readonly toolUseId: string;
  reportProgress(progress: Progress): void;
}

export interface ToolContextOptions {
  workingDir: string;
  session?: Session;
  permissionMode?: PermissionMode;
  permissionHandler?: PermissionHandler;
  nonInteractive?: boolean;
  mcpManager?: McpManager;
  /** Your own tools, run through the same pipeline as the built-ins. */
  tools?: AnyTool[];
  config?: Settings;
  costTracker?: CostTracker;
  /** Extra rules (CLI `--allow` / `--deny`), added with scope "cli". */
  rules?: PermissionRuleEntry[];
  /** The sub-agent type, which picks the rules scoped to it (`permissions.agents` in settings). */
  agentType?: string;
}

/** Session-scoped permission state, so a named session keeps its mode and grants between CLI runs. */
interface PermissionState {
  mode: PermissionMode | undefined;
  granted: PermissionRuleEntry[];
}

const permissionStateSlot: SessionSlot<PermissionState> = {
  key: "permissions",
  create: () => ({ mode: undefined, granted: [] }),
  save: (s) => s,
  load: (data) => {
    const d = data as Partial<PermissionState>;
    return { mode: d.mode, granted: Array.isArray(d.granted) ? d.granted : [] };
  },
};

export function createToolContext(options: ToolContextOptions): ToolContext {
  const workingDir = resolve(options.workingDir);
  const session = options.session ?? new Session();
  const config = options.config ?? emptySettings(workingDir);
  const state = session.get(permissionStateSlot);
  const baseMode: PermissionMode = options.permissionMode ?? config.defaultMode ?? "default";
  const nonInteractive = options.nonInteractive ?? true;
  const handler = options.permissionHandler ?? autoHandler;
  const cliRules = options.rules ?? [];
  const additionalDirectories = config.additionalDirectories.map((d) =>
    resolve(workingDir, expandTilde(d, homedir())),
  );

  const context: ToolContext = {
    workingDir,
    get permissionMode() {
      return state.mode ?? baseMode;
    },
    setPermissionMode(mode) {
      state.mode = mode;
    },
    permissionHandler: handler,
    costTracker: options.costTracker ?? new CostTracker(),
    sessionId: session.id,
    session,
    nonInteractive,
    mcpManager: options.mcpManager,
    extraTools: options.tools ?? [],
    config,
    additionalDirectories,
    agentType: options.agentType,
    resolvePath(path) {
      const expanded = expandTilde(path, homedir());
      return isAbsolute(expanded) ? resolve(expanded) : resolve(workingDir, expanded);
    },
    rules() {
      return [...config.rules, ...cliRules, ...state.granted];
    },
    addRules(entries) {
      state.granted.push(...entries);
    },
    async checkPermission(tool, input, signal, hook) {
      return decideWithHandler(context, tool, input, signal ?? new AbortController().signal, hook);
    },
  };
  return context;
}

async function decideWithHandler(
  ctx: ToolContext,
  tool: AnyTool,
  input: unknown,
  signal: AbortSignal,
  hook: HookPermission | undefined,
): Promise<PermissionDecision> {
  if (tool.permissionLevel === "none") return { behavior: "allow", reason: "this tool needs no permission" };
  const subject = tool.permissionSubject(input, ctx);
  const evaluation = {
    toolName: tool.name,
    level: tool.permissionLevel,
    subject,
    mode: ctx.permissionMode,
    rules: ctx.rules(),
    workingDir: ctx.workingDir,
    additionalDirectories: ctx.additionalDirectories,
    homeDir: homedir(),
    agentType: ctx.agentType,
    controlFiles: hookScripts(
      Object.values(ctx.config.hooks).flatMap((matchers) =>
        matchers.flatMap((m) => m.hooks.map((h) => h.command)),
      ),
      ctx.config.projectDir,
      homedir(),
    ),
  };
  let decision = evaluatePermission(evaluation);
  const { matchedRules } = decision;
  // A hook answers the question the mode would ask; deny and ask rules are the user's and still hold.
  const byAskRule = decision.behavior === "ask" && decision.rule !== undefined;
  if (hook?.decision === "allow" && decision.behavior !== "deny" && !byAskRule) {
    return { behavior: "allow", reason: `allowed by a PreToolUse hook: ${hook.reason}`, matchedRules };
  }
  if (hook?.decision === "ask" && decision.behavior === "allow") {
    decision = {
      behavior: "ask",
      reason: `a PreToolUse hook asks for approval: ${hook.reason}`,
      matchedRules,
    };
  }
  if (decision.behavior !== "ask") return decision;

  const { suggestPrefixRules, suggestRules } = await import("../permissions/suggest.js");
  const suggestedRules = suggestRules(evaluation);
  const prefixRules = suggestPrefixRules(evaluation, suggestedRules);
  const answer = await ctx.permissionHandler.ask(
    {
      toolName: tool.name,
      input,
      level: tool.permissionLevel,
      subject,
      mode: ctx.permissionMode,
      reason: decision.reason,
      suggestedRules,
      prefixRules,
      workingDir: ctx.workingDir,
    },
    signal,
  );
  if (answer.behavior === "deny") {
    return {
      behavior: "deny",
      reason: answer.message ?? `${decision.reason}; the request was declined`,
      matchedRules,
    };
  }
  if (answer.scope !== "once") {
    const remembered = answer.remember === "prefix" && prefixRules.length > 0 ? prefixRules : suggestedRules;
    ctx.addRules(
      remembered.map((rule) => ({
        rule,
        behavior: "allow",
        source: { scope: "session", root: ctx.workingDir },
      })),
    );
    if (answer.scope === "always") {
      try {
        for (const rule of remembered) persistRule(ctx.config.projectDir, rule);
      } catch (error) {
        return {
          behavior: "allow",
          reason: `allowed by the user for this session; saving the rule failed: ${(error as Error).message}`,
          matchedRules,
        };
      }
    }
  }
  return { behavior: "allow", reason: `allowed by the user (${answer.scope})`, matchedRules };
}
