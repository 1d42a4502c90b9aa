import type { ToolContext } from "../core/context.js";
import type { Usage } from "../core/cost.js";
import { configuredEnv } from "../core/env.js";
import type { ModelAccess } from "../core/host.js";
import type { SessionSlot } from "../core/session.js";
import { PROMPT_MAX_OUTPUT_TOKENS, PROMPT_TIMEOUT_MS } from "./limits.js";

/**
 * The small, fast model WebFetch hands a page and the caller's prompt to. A host with its own provider
 * (the agent loop) sets it for a session with setPromptModel; otherwise ANTHROPIC_API_KEY (or
 * ANTHROPIC_AUTH_TOKEN) and ANTHROPIC_BASE_URL, from settings `env` or the environment, configure one.
 */

export interface PromptRequest {
  prompt: string;
  /** The page text (already cut to what the model may read). */
  content: string;
  url: string;
  signal: AbortSignal;
}

export interface PromptAnswer {
  text: string;
  /** The model that answered, for the cost tracker. */
  model: string;
  usage?: Usage;
}

export interface PromptModel {
  /** For messages: "claude-haiku-5-5 at https://api.anthropic.com". */
  readonly description: string;
  apply(request: PromptRequest): Promise<PromptAnswer>;
}

/** Anthropic's current small, fast model; ANTHROPIC_DEFAULT_HAIKU_MODEL (Claude Code's variable) overrides it. */
export const DEFAULT_PROMPT_MODEL = "claude-haiku-5-5";

const SYSTEM_PROMPT =
  "You answer questions about one web page, using only the page content you are given. Quote exactly " +
  "where wording matters (code, commands, version numbers, API names). If the page does not answer the " +
  "question, say so plainly instead of guessing. Be concise.";

/** The user message: the page, then the instruction, so the instruction is the last thing read. */
export function promptMessage(request: Pick<PromptRequest, "prompt" | "content" | "url">): string {
  return `Web page content from ${request.url}:\n---\n${request.content}\n---\n\n${request.prompt}`;
}

const slot: SessionSlot<{ model: PromptModel | undefined }> = {
  key: "web-prompt-model",
  create: () => ({ model: undefined }),
};

/** Gives a session the model WebFetch applies prompts with (undefined: back to the configured one). */
export function setPromptModel(ctx: Pick<ToolContext, "session">, model: PromptModel | undefined): void {
  ctx.session.get(slot).model = model;
}

interface AnthropicOptions {
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
  model: string;
}

export function anthropicPromptModel(options: AnthropicOptions): PromptModel {
  const where = options.baseURL ?? "https://api.anthropic.com";
  return {
    description: `${options.model} at ${where}`,
    async apply(request) {
      // The SDK is loaded only when a prompt is applied, so listing tools stays fast.
      const { default: Anthropic } = await import("@anthropic-ai/sdk");
      const client = new Anthropic({
        ...(options.apiKey ? { apiKey: options.apiKey } : { authToken: options.authToken }),
        baseURL: options.baseURL,
        timeout: PROMPT_TIMEOUT_MS,
        maxRetries: 1,
      });
      const message = await client.messages.create(
        {
          model: options.model,
          max_tokens: PROMPT_MAX_OUTPUT_TOKENS,
          system: SYSTEM_PROMPT,
          messages: [{ role: "user", content: promptMessage(request) }],
        },
        { signal: request.signal },
      );
      const text = message.content
        .flatMap((block) => (block.type === "text" ? [block.text] : []))
        .join("\n")
        .trim();
      return {
        text,
        model: message.model || options.model,
        usage: {
          inputTokens: message.usage.input_tokens,
          outputTokens: message.usage.output_tokens,
          cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
          cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
        },
      };
    },
  };
}

/** A host's model (the agent's provider, local models included) as WebFetch's prompt model. */
function hostPromptModel(model: ModelAccess): PromptModel {
  return {
    description: `the host's model (${model.defaultModel})`,
    async apply(request) {
      return model.complete(
        { system: SYSTEM_PROMPT, prompt: promptMessage(request), maxTokens: PROMPT_MAX_OUTPUT_TOKENS },
        request.signal,
      );
    },
  };
}

/**
 * The session's own model (setPromptModel), else the host's (the agent loop, an MCP server with a model),
 * else one configured by the Anthropic variables, else undefined.
 */
export function promptModelFor(
  ctx: Pick<ToolContext, "session" | "config" | "host">,
): PromptModel | undefined {
  const set = ctx.session.get(slot).model;
  if (set) return set;
  if (ctx.host.model) return hostPromptModel(ctx.host.model);
  const apiKey = configuredEnv(ctx, "ANTHROPIC_API_KEY");
  const authToken = configuredEnv(ctx, "ANTHROPIC_AUTH_TOKEN");
  if (!apiKey && !authToken) return undefined;
  return anthropicPromptModel({
    apiKey: apiKey || undefined,
    authToken: authToken || undefined,
    baseURL: configuredEnv(ctx, "ANTHROPIC_BASE_URL") || undefined,
    model:
      configuredEnv(ctx, "ANTHROPIC_DEFAULT_HAIKU_MODEL") ||
      configuredEnv(ctx, "ANTHROPIC_SMALL_FAST_MODEL") ||
      DEFAULT_PROMPT_MODEL,
  });
}
