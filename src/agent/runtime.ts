import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { forkContext, type ToolContext } from "../core/context.js";
import type { ModelAccess, SubagentRequest, SubagentResult } from "../core/host.js";
import { log } from "../core/log.js";
import { isPermissionMode } from "../core/permission-level.js";
import { Session, type SessionSlot } from "../core/session.js";
import { ToolName } from "../core/tool-names.js";
import { type AgentType, loadAgentTypes } from "./agent-types.js";
import { anthropicProvider } from "./anthropic.js";
import { DEFAULT_MAX_TURNS, MAX_AGENT_DEPTH, SMALL_MAX_TOKENS, STREAM_IDLE_MS } from "./limits.js";
import { Agent, type AgentEvent, type RetryPolicy } from "./loop.js";
import { type TokenUsage, textOf } from "./messages.js";
import { openAIProvider } from "./openai.js";
import type { ModelProvider } from "./provider.js";
import { systemPrompt } from "./system-prompt.js";

/** Model aliases models and users write (Task's `model`, `--model`), and the ids they stand for. */
export const MODEL_ALIASES: Record<string, string> = {
  sonnet: "claude-sonnet-5-5",
  opus: "claude-opus-5-5",
  haiku: "claude-haiku-5-5",
  fable: "claude-fable-5-2",
};

/** The model used when neither `--model` nor the `model` setting names one. */
export const DEFAULT_MODEL = MODEL_ALIASES.sonnet!;
/** The small, fast model for one-shot answers (WebFetch's prompt) and summaries. */
export const DEFAULT_SMALL_MODEL = MODEL_ALIASES.haiku!;

export function resolveModel(name: string | undefined, fallback: string): string {
  if (!name) return fallback;
  return MODEL_ALIASES[name] ?? name;
}

/**
 * The main model, as Claude Code chooses it: `--model`, else ANTHROPIC_MODEL, else the `model` setting, else a
 * current Sonnet; aliases resolved.
 */
export function chooseModel(flag: string | undefined, env: NodeJS.ProcessEnv, setting: unknown): string {
  const named = flag || env.ANTHROPIC_MODEL || (typeof setting === "string" ? setting : undefined);
  return resolveModel(named, DEFAULT_MODEL);
}

export interface RuntimeOptions {
  provider: ModelProvider;
  model: string;
  smallModel?: string;
  maxTokens?: number;
  contextWindow?: number;
  retry?: Partial<RetryPolicy>;
  /** Where user-level custom agents live (`~/.claude/agents`). */
  configDir: string;
}

/** Which provider the environment configures, if any: a clear reason when none. */
export function providerFromEnv(
  env: NodeJS.ProcessEnv,
  choice: "anthropic" | "openai" | undefined,
  idleMs = STREAM_IDLE_MS,
): { provider: ModelProvider } | { missing: string } {
  const anthropicKey = env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN;
  const kind = choice ?? (anthropicKey ? "anthropic" : env.OPENAI_BASE_URL ? "openai" : "anthropic");
  if (kind === "openai") {
    if (!env.OPENAI_BASE_URL) {
      return {
        missing:
          "Set OPENAI_BASE_URL to your OpenAI-compatible server's /v1 URL (for Ollama: http://127.0.0.1:11434/v1), and OPENAI_API_KEY if it needs one.",
      };
    }
    return {
      provider: openAIProvider({
        apiKey: env.OPENAI_API_KEY || "local",
        baseURL: env.OPENAI_BASE_URL,
        idleMs,
      }),
    };
  }
  if (!anthropicKey) {
    return {
      missing:
        "Set ANTHROPIC_API_KEY to an Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-…), or ANTHROPIC_AUTH_TOKEN for a gateway's bearer token, or use a local model with --provider openai and OPENAI_BASE_URL.",
    };
  }
  return {
    provider: anthropicProvider({
      apiKey: env.ANTHROPIC_API_KEY || undefined,
      authToken: env.ANTHROPIC_AUTH_TOKEN || undefined,
      baseURL: env.ANTHROPIC_BASE_URL,
      idleMs,
    }),
  };
}

interface SubagentRecord {
  agent: Agent;
  session: Session;
  type: string;
  /**
   * Its runs, one after another: a message that arrives while it works (its Task, an earlier message) waits
   * for that run to end, since two runs on one conversation would interleave their turns.
   */
  runs: Promise<unknown>;
}

/** Runs `work` after the record's earlier runs have ended, whatever their outcome. */
function nextRun<T>(record: SubagentRecord, work: () => Promise<T>): Promise<T> {
  const run = record.runs.then(work, work);
  record.runs = run.catch(() => undefined);
  return run;
}

/** The sub-agents a session started (kept so SendMessage can continue one), ended with the session. */
const subagentsSlot: SessionSlot<Map<string, SubagentRecord>> = {
  key: "subagents",
  create: () => new Map(),
  dispose: async (agents) => {
    await Promise.all([...agents.values()].map((a) => a.session.dispose()));
  },
};

/** How deep a session is among sub-agents: 0 for a conversation a host started. */
const depthSlot: SessionSlot<{ depth: number }> = { key: "agent-depth", create: () => ({ depth: 0 }) };

const SUBAGENT_INSTRUCTIONS = `You are a sub-agent: another agent gave you the task below. Work on it with your tools until it
is done, then answer with a complete, self-contained report of what you found or did (the other agent sees only
your final message). Do not ask questions back; make reasonable assumptions and state them.`;

/**
 * The model side of a host: one provider and its defaults, sub-agents over it, and the ModelAccess that
 * Task and WebFetch use. The agent CLI and the MCP server (when a model is configured) each have one.
 */
export class AgentRuntime implements ModelAccess {
  constructor(readonly options: RuntimeOptions) {}

  get defaultModel(): string {
    return this.options.model;
  }

  /** Whether the provider is not Anthropic's, where Claude's model ids and aliases mean nothing. */
  private get foreign(): boolean {
    return this.options.provider.name !== "anthropic";
  }

  /**
   * The model id for a call: `name` (aliases resolved) or `fallback`. Another provider (a local model behind
   * OPENAI_BASE_URL) takes an alias as "the default": its own model.
   */
  private modelFor(name: string | undefined, fallback: string): string {
    if (this.foreign && (name === undefined || Object.hasOwn(MODEL_ALIASES, name))) return fallback;
    return resolveModel(name, fallback);
  }

  /** A conversation over `ctx`'s tools, with the system prompt for its workspace. */
  async createAgent(
    ctx: ToolContext,
    overrides: {
      model?: string;
      instructions?: string;
      stopEvent?: "Stop" | "SubagentStop";
      maxTurns?: number;
    } = {},
  ): Promise<Agent> {
    return new Agent({
      ctx,
      provider: this.options.provider,
      model: this.modelFor(overrides.model, this.options.model),
      system: await systemPrompt({
        workingDir: ctx.workingDir,
        instructions: overrides.instructions,
        configDir: this.options.configDir,
        ...(ctx.tools.get(ToolName.Task) ? { agentTypes: await this.types(ctx) } : {}),
      }),
      maxTokens: this.options.maxTokens,
      maxTurns: overrides.maxTurns ?? DEFAULT_MAX_TURNS,
      contextWindow: this.options.contextWindow,
      retry: this.options.retry,
      stopEvent: overrides.stopEvent,
    });
  }

  async complete(
    request: { system?: string; prompt: string; model?: string; maxTokens?: number },
    signal: AbortSignal,
  ): Promise<{ text: string; model: string; usage: TokenUsage }> {
    const turn = await this.options.provider.send(
      {
        model: this.modelFor(
          request.model,
          this.options.smallModel ?? (this.foreign ? this.options.model : DEFAULT_SMALL_MODEL),
        ),
        system: request.system ?? "",
        messages: [{ role: "user", content: [{ type: "text", text: request.prompt }] }],
        tools: [],
        maxTokens: request.maxTokens ?? SMALL_MAX_TOKENS,
      },
      signal,
    );
    return { text: textOf(turn.content), model: turn.model, usage: turn.usage };
  }

  private cachedTypes: { dir: string; types: AgentType[]; skipped: string[] } | undefined;

  /** The agent types of the parent's workspace, loaded once per workspace; files that could not be read are logged. */
  private async types(parent: ToolContext): Promise<AgentType[]> {
    if (this.cachedTypes?.dir !== parent.workingDir) {
      const { types, skipped, warnings } = await loadAgentTypes(parent.workingDir, this.options.configDir);
      for (const problem of skipped) log.warn(`agent definition skipped: ${problem}`);
      for (const warning of warnings) log.warn(`agent definition: ${warning}`);
      this.cachedTypes = { dir: parent.workingDir, types, skipped };
    }
    return this.cachedTypes.types;
  }

  async runSubagent(
    request: SubagentRequest,
    parent: ToolContext,
    signal: AbortSignal,
    onProgress?: (line: string) => void,
  ): Promise<SubagentResult> {
    const started = Date.now();
    const depth = parent.session.get(depthSlot).depth + 1;
    const failed = (text: string): SubagentResult => ({
      agentId: "",
      text,
      isError: true,
      inputTokens: 0,
      outputTokens: 0,
      toolUses: 0,
      durationMs: Date.now() - started,
    });
    if (depth > MAX_AGENT_DEPTH) {
      return failed(
        `Sub-agents may nest ${MAX_AGENT_DEPTH} deep at most; do this part of the task yourself.`,
      );
    }
    const types = await this.types(parent);
    const type = types.find((t) => t.name === request.subagentType);
    if (!type) {
      const skipped = this.cachedTypes?.skipped ?? [];
      return failed(
        `No agent type named "${request.subagentType}". Available: ${types.map((t) => t.name).join(", ")}.${skipped.length > 0 ? ` Skipped definitions: ${skipped.join("; ")}.` : ""}`,
      );
    }
    const known = parent.session.get(subagentsSlot);
    if (request.name && known.has(request.name)) {
      return failed(
        `A sub-agent named "${request.name}" already exists; continue it with SendMessage or choose another name.`,
      );
    }
    const agentId = request.name ?? `agent-${randomUUID().slice(0, 8)}`;
    const session = new Session({ id: agentId, dir: join(parent.session.dir, agentId) });
    session.get(depthSlot).depth = depth;
    // The sub-agent starts in the mode asked for (Task allows none more permissive) or its parent's, and keeps
    // its own: a sub-agent entering or leaving plan mode does not move the conversation that started it.
    const mode = request.mode && isPermissionMode(request.mode) ? request.mode : parent.permissionMode;
    const ctx = forkContext(parent, {
      session,
      ...(request.workingDir ? { workingDir: request.workingDir } : {}),
      tools: type.tools(parent.tools),
      agentType: type.name,
      permissionMode: mode,
    });
    const agent = await this.createAgent(ctx, {
      model: request.model ?? type.model,
      instructions: [SUBAGENT_INSTRUCTIONS, type.instructions].filter(Boolean).join("\n\n"),
      stopEvent: "SubagentStop",
    });
    const record: SubagentRecord = { agent, session, type: type.name, runs: Promise.resolve() };
    known.set(agentId, record);
    return nextRun(record, () => this.runAgent(agentId, agent, request.prompt, signal, onProgress, started));
  }

  /** Sub-agents of this session that SendMessage can continue. */
  subagents(parent: ToolContext): string[] {
    return [...parent.session.get(subagentsSlot).keys()];
  }

  /** Continues a sub-agent's conversation with a new message; undefined when there is no such agent. */
  async continueSubagent(
    parent: ToolContext,
    agentId: string,
    message: string,
    signal: AbortSignal,
    onProgress?: (line: string) => void,
  ): Promise<SubagentResult | undefined> {
    const record = parent.session.get(subagentsSlot).get(agentId);
    if (!record) return undefined;
    return nextRun(record, () =>
      this.runAgent(agentId, record.agent, message, signal, onProgress, Date.now()),
    );
  }

  private async runAgent(
    agentId: string,
    agent: Agent,
    prompt: string,
    signal: AbortSignal,
    onProgress: ((line: string) => void) | undefined,
    started: number,
  ): Promise<SubagentResult> {
    const result = await agent.run(prompt, signal, (event: AgentEvent) => {
      if (event.type === "tool_start")
        onProgress?.(`${event.name} ${JSON.stringify(event.input).slice(0, 120)}`);
    });
    return {
      agentId,
      text: result.text,
      isError: result.stop === "error" || result.stop === "cancelled",
      inputTokens: result.usage.inputTokens + result.usage.cacheReadTokens + result.usage.cacheWriteTokens,
      outputTokens: result.usage.outputTokens,
      toolUses: result.toolUses,
      durationMs: Date.now() - started,
    };
  }
}
