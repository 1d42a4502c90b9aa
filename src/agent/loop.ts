import type { ToolContext } from "../core/context.js";
import { ToolResult } from "../core/result.js";
import { runToolBatch } from "../executor/batch.js";
import { runHooks } from "../hooks/run.js";
import { inboxSlot, renderMessages } from "../messages/inbox.js";
import { toAnthropicTools, toolsFor } from "../registry.js";
import { elideOldToolResults, estimateTokens, SUMMARY_REQUEST, summarizedHistory } from "./compact.js";
import { DEFAULT_CONTEXT_WINDOW } from "./context-window.js";
import {
  COMPACT_AT_FRACTION,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  MALFORMED_INPUT_SHOWN,
  MAX_CONTINUATIONS,
  MODEL_MAX_ATTEMPTS,
  MODEL_RETRY_BASE_DELAY_MS,
  MODEL_RETRY_MAX_DELAY_MS,
  SMALL_MAX_TOKENS,
} from "./limits.js";
import {
  type AssistantTurn,
  emptyUsage,
  type ImagePart,
  type Message,
  type TextPart,
  type TokenUsage,
  type ToolResultPart,
  type ToolUsePart,
  textOf,
  unparsedInput,
} from "./messages.js";
import { apiError, ModelError, type ModelProvider, type ModelRequest, type StreamEvent } from "./provider.js";

const CONTINUE_REQUEST = "Your reply was cut off at the output limit. Continue exactly where you stopped.";

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** What a run reports while it goes, for hosts that show progress. */
export type AgentEvent =
  | StreamEvent
  | { type: "tool_start"; id: string; name: string; input: unknown }
  | { type: "tool_end"; id: string; name: string; result: ToolResult }
  | { type: "retry"; attempt: number; delayMs: number; error: string }
  | { type: "compacted"; how: "elided" | "summarized"; tokensBefore: number; tokensAfter: number }
  | { type: "turn"; turn: number; usage: TokenUsage; model: string }
  | { type: "message"; message: Message };

export interface AgentConfig {
  ctx: ToolContext;
  provider: ModelProvider;
  model: string;
  system: string;
  maxTurns?: number;
  maxTokens?: number;
  contextWindow?: number;
  /** The hook event run when the agent wants to stop: Stop for the main conversation, SubagentStop for others. */
  stopEvent?: "Stop" | "SubagentStop";
  retry?: Partial<RetryPolicy>;
}

export type AgentStop = "end_turn" | "max_turns" | "cancelled" | "error" | "blocked";

export interface AgentRunResult {
  /** The final answer: the last reply's text (or why there is none). */
  text: string;
  stop: AgentStop;
  turns: number;
  toolUses: number;
  usage: TokenUsage;
  durationMs: number;
}

function toToolResultPart(id: string, result: ToolResult): ToolResultPart {
  const content: Array<TextPart | ImagePart> = result.content.map((block) =>
    block.type === "text"
      ? { type: "text", text: block.text }
      : { type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } },
  );
  if (content.length === 0) content.push({ type: "text", text: "(no output)" });
  return { type: "tool_result", tool_use_id: id, content, ...(result.isError ? { is_error: true } : {}) };
}

/** The answer to a call whose arguments could not be parsed: what was wrong, and the text as it arrived. */
function malformedCall(call: ToolUsePart): ToolResult {
  const { json, problem } = unparsedInput(call.input)!;
  const shown = json.length > MALFORMED_INPUT_SHOWN ? `${json.slice(0, MALFORMED_INPUT_SHOWN)}…` : json;
  return ToolResult.rejected(
    `The arguments of this ${call.name} call are not valid JSON (${problem}), so it did not run. Send the call again with its arguments as one JSON object. They were: ${shown}`,
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function addUsage(total: TokenUsage, usage: TokenUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens;
  total.cacheWriteTokens += usage.cacheWriteTokens;
}

/** The messages waiting in the session's inbox, as one text (taken: each is seen once). */
function sessionMessages(ctx: ToolContext): string[] {
  const messages = ctx.session.get(inboxSlot).take();
  return messages.length > 0 ? [renderMessages(messages)] : [];
}

/**
 * One conversation with a model over the context's tools: every tool call goes through the executor (hooks,
 * permissions, budgets), read-only calls of a turn in parallel. `run` takes a prompt and goes until the model
 * ends its turn, the turn limit, a cancellation or an error; the history stays for the next prompt.
 */
export class Agent {
  messages: Message[] = [];
  private readonly retry: RetryPolicy;
  /** Deferred tools the model brought in with ToolSearch: their definitions are sent from then on. */
  private readonly loaded = new Set<string>();
  /** Reported input tokens ÷ estimated, from the last reply: calibrates the estimate that decides compaction. */
  private scale = 1;

  constructor(readonly config: AgentConfig) {
    this.retry = {
      attempts: config.retry?.attempts ?? MODEL_MAX_ATTEMPTS,
      baseDelayMs: config.retry?.baseDelayMs ?? MODEL_RETRY_BASE_DELAY_MS,
      maxDelayMs: config.retry?.maxDelayMs ?? MODEL_RETRY_MAX_DELAY_MS,
    };
  }

  get ctx(): ToolContext {
    return this.config.ctx;
  }

  /** The tools the model is offered now. */
  toolNames(): string[] {
    return toolsFor(this.ctx).map((t) => t.name);
  }

  clear(): void {
    this.messages = [];
    this.loaded.clear();
    this.scale = 1;
  }

  async run(
    prompt: string,
    signal: AbortSignal,
    onEvent: (event: AgentEvent) => void = () => {},
  ): Promise<AgentRunResult> {
    const started = Date.now();
    const usage = emptyUsage();
    let turns = 0;
    let toolUses = 0;
    const finish = (stop: AgentStop, text: string): AgentRunResult => ({
      text,
      stop,
      turns,
      toolUses,
      usage,
      durationMs: Date.now() - started,
    });

    const submitted = await runHooks("UserPromptSubmit", { prompt }, this.ctx, signal);
    if (submitted.blocked)
      return finish("blocked", `The prompt was blocked by a UserPromptSubmit hook: ${submitted.blocked}`);
    const context = submitted.feedback.map((text) => ({ type: "text" as const, text }));
    this.append({ role: "user", content: [{ type: "text", text: prompt }, ...context] }, onEvent);

    const maxTurns = this.config.maxTurns ?? DEFAULT_MAX_TURNS;
    let continuations = 0;
    let stopHookActive = false;
    let lastText = "";
    let cutText = "";
    for (;;) {
      if (signal.aborted) return finish("cancelled", "The run was interrupted.");
      if (turns >= maxTurns) {
        return finish(
          "max_turns",
          `${lastText}${lastText ? "\n\n" : ""}[stopped after ${maxTurns} turns, the most this run may take]`,
        );
      }
      this.takeInbox();
      let turn: AssistantTurn;
      try {
        await this.compactIfNeeded(signal, onEvent);
        turn = await this.send(this.request(), signal, onEvent);
      } catch (error) {
        if (signal.aborted) return finish("cancelled", "The run was interrupted.");
        return finish("error", `The model could not be reached: ${(error as Error).message}`);
      }
      turns++;
      addUsage(usage, turn.usage);
      this.ctx.costTracker.add(turn.model, turn.usage);
      onEvent({ type: "turn", turn: turns, usage: turn.usage, model: turn.model });
      this.append({ role: "assistant", content: turn.content }, onEvent);
      lastText = textOf(turn.content) || lastText;

      const calls = turn.content.filter((p): p is ToolUsePart => p.type === "tool_use");
      if (calls.length > 0) {
        toolUses += calls.length;
        cutText = "";
        const results = await this.runTools(calls, signal, onEvent);
        this.append({ role: "user", content: results }, onEvent);
        continue;
      }
      if (turn.stopReason === "max_tokens" && continuations < MAX_CONTINUATIONS) {
        continuations++;
        cutText += textOf(turn.content);
        this.append({ role: "user", content: [{ type: "text", text: CONTINUE_REQUEST }] }, onEvent);
        continue;
      }
      continuations = 0;
      // The answer of a reply that was cut and continued is all of its pieces.
      const answer = cutText + textOf(turn.content);
      cutText = "";
      const event = this.config.stopEvent ?? "Stop";
      // A sub-agent's session is named by its agent id.
      const payload =
        event === "SubagentStop"
          ? { stop_hook_active: stopHookActive, agent_id: this.ctx.sessionId }
          : { stop_hook_active: stopHookActive };
      const stop = await runHooks(event, payload, this.ctx, signal);
      if (stop.blocked && !signal.aborted) {
        stopHookActive = true;
        this.append(
          {
            role: "user",
            content: [{ type: "text", text: `A ${event} hook asks you to go on: ${stop.blocked}` }],
          },
          onEvent,
        );
        continue;
      }
      return finish("end_turn", answer || lastText);
    }
  }

  private append(message: Message, onEvent: (event: AgentEvent) => void): void {
    this.messages.push(message);
    onEvent({ type: "message", message });
  }

  /** Messages and prompts that arrived since the last call join the latest user message. */
  private takeInbox(): void {
    // What the host delivered to this conversation's session (src/messages/inbox.ts): messages, sub-agents'
    // answers, cron prompts.
    const arrived = sessionMessages(this.ctx);
    if (arrived.length === 0) return;
    const last = this.messages.at(-1);
    const parts = arrived.map((text) => ({ type: "text" as const, text }));
    if (last?.role === "user") last.content.push(...parts);
    else this.messages.push({ role: "user", content: parts });
  }

  private request(): ModelRequest {
    const tools = toolsFor(this.ctx);
    return {
      model: this.config.model,
      system: this.config.system,
      messages: this.messages,
      tools: toAnthropicTools(tools, { loaded: this.loaded }),
      maxTokens: this.config.maxTokens ?? DEFAULT_MAX_TOKENS,
    };
  }

  private async runTools(
    calls: ToolUsePart[],
    signal: AbortSignal,
    onEvent: (e: AgentEvent) => void,
  ): Promise<ToolResultPart[]> {
    for (const call of calls)
      onEvent({ type: "tool_start", id: call.id, name: call.name, input: call.input });
    // A call whose arguments are not JSON never reaches the executor: there is nothing to check or run.
    const runnable = calls.filter((c) => !unparsedInput(c.input));
    const ran = await runToolBatch(
      runnable.map((c) => ({ name: c.name, input: c.input, id: c.id })),
      this.ctx,
      { signal },
    );
    const results = new Map(runnable.map((call, i) => [call, ran[i]!]));
    return calls.map((call) => {
      const result = results.get(call) ?? malformedCall(call);
      onEvent({ type: "tool_end", id: call.id, name: call.name, result });
      const brought = result.metadata?.loadedTools;
      if (Array.isArray(brought))
        for (const name of brought) if (typeof name === "string") this.loaded.add(name);
      return toToolResultPart(call.id, result);
    });
  }

  /** One model call, retried with backoff (and the API's retry-after) on 429, 529, 5xx and stalled streams. */
  private async send(
    request: ModelRequest,
    signal: AbortSignal,
    onEvent: (e: AgentEvent) => void,
  ): Promise<AssistantTurn> {
    for (let attempt = 1; ; attempt++) {
      try {
        const turn = await this.config.provider.send(request, signal, onEvent);
        const estimate = estimateTokens(request.messages);
        const reported = turn.usage.inputTokens + turn.usage.cacheReadTokens + turn.usage.cacheWriteTokens;
        if (estimate > 0 && reported > 0) this.scale = Math.min(4, Math.max(0.5, reported / estimate));
        return turn;
      } catch (error) {
        const failure = error instanceof ModelError ? error : apiError(error);
        if (!failure.retryable || attempt >= this.retry.attempts || signal.aborted) throw failure;
        const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
        const delayMs =
          failure.retryAfterSeconds !== undefined
            ? Math.min(this.retry.maxDelayMs, failure.retryAfterSeconds * 1000)
            : Math.round(backoff * (0.8 + Math.random() * 0.4));
        onEvent({ type: "retry", attempt, delayMs, error: failure.message });
        await sleep(delayMs, signal);
      }
    }
  }

  /**
   * Near the context window: old tool results are elided first; if that is not enough, the model summarises
   * the history (PreCompact hooks run first) and the summary replaces it.
   */
  private async compactIfNeeded(signal: AbortSignal, onEvent: (e: AgentEvent) => void): Promise<void> {
    const limit = (this.config.contextWindow ?? DEFAULT_CONTEXT_WINDOW) * COMPACT_AT_FRACTION;
    const measure = () =>
      Math.round((estimateTokens(this.messages) + this.config.system.length / 4) * this.scale);
    const before = measure();
    if (before <= limit) return;
    if (elideOldToolResults(this.messages) > 0) {
      const after = measure();
      onEvent({ type: "compacted", how: "elided", tokensBefore: before, tokensAfter: after });
      if (after <= limit) return;
    }
    const pre = await runHooks("PreCompact", { trigger: "auto", custom_instructions: "" }, this.ctx, signal);
    const request: ModelRequest = {
      model: this.config.model,
      system: this.config.system,
      messages: [...this.messages.slice(0, -1), this.withSummaryRequest(this.messages.at(-1)!, pre.feedback)],
      tools: [],
      maxTokens: SMALL_MAX_TOKENS,
    };
    const summary = await this.send(request, signal, () => {});
    this.ctx.costTracker.add(summary.model, summary.usage);
    this.messages = summarizedHistory(textOf(summary.content));
    onEvent({ type: "compacted", how: "summarized", tokensBefore: before, tokensAfter: measure() });
  }

  private withSummaryRequest(last: Message, extra: string[]): Message {
    const ask = [SUMMARY_REQUEST, ...extra].join("\n\n");
    return last.role === "user"
      ? { role: "user", content: [...last.content, { type: "text", text: ask }] }
      : last;
  }
}
