import type { AssistantTurn, StopReason, TextPart, TokenUsage, ToolUsePart } from "./messages.js";
import { emptyUsage, parseToolInput } from "./messages.js";
import {
  guardedStream,
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type StreamEvent,
} from "./provider.js";

export interface AnthropicOptions {
  /** ANTHROPIC_API_KEY (sent as x-api-key) or ANTHROPIC_AUTH_TOKEN (a gateway's bearer token): one of them. */
  apiKey?: string;
  authToken?: string;
  /** ANTHROPIC_BASE_URL: a proxy, a gateway, or the tests' loopback stand-in. */
  baseURL?: string;
  /** Quiet time after which a stream counts as stalled. */
  idleMs: number;
}

/** The Anthropic Messages API, streamed with server-sent events. */
export function anthropicProvider(options: AnthropicOptions): ModelProvider {
  let client: import("@anthropic-ai/sdk").default | undefined;
  return {
    name: "anthropic",
    async send(request: ModelRequest, signal: AbortSignal, onEvent?: (event: StreamEvent) => void) {
      if (!client) {
        const { default: Anthropic } = await import("@anthropic-ai/sdk");
        // Retries are the loop's (they apply to every provider and are tested there).
        client = new Anthropic({
          apiKey: options.apiKey ?? null,
          authToken: options.authToken ?? null,
          baseURL: options.baseURL,
          maxRetries: 0,
        });
      }
      return guardedStream(signal, options.idleMs, async (streamSignal, tick) => {
        const stream = await client!.messages.create(
          {
            model: request.model,
            system: request.system,
            max_tokens: request.maxTokens,
            messages: request.messages as never,
            ...(request.tools.length > 0 ? { tools: request.tools as never } : {}),
            stream: true,
          },
          { signal: streamSignal },
        );
        return collect(stream, request.model, onEvent, tick);
      });
    },
  };
}

/** Builds the reply from the stream's events. */
async function collect(
  stream: AsyncIterable<unknown>,
  requestedModel: string,
  onEvent: ((event: StreamEvent) => void) | undefined,
  tick: () => void,
): Promise<AssistantTurn> {
  const blocks: Array<TextPart | (ToolUsePart & { json: string })> = [];
  const usage: TokenUsage = emptyUsage();
  let stopReason: StopReason = "end_turn";
  let model = requestedModel;
  let sawStop = false;
  for await (const raw of stream) {
    tick();
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's event union, read field by field.
    const event = raw as any;
    switch (event.type) {
      case "message_start": {
        model = event.message?.model ?? model;
        const u = event.message?.usage ?? {};
        usage.inputTokens = u.input_tokens ?? 0;
        usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
        usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
        usage.outputTokens = u.output_tokens ?? 0;
        break;
      }
      case "content_block_start": {
        const block = event.content_block;
        if (block?.type === "text") blocks[event.index] = { type: "text", text: block.text ?? "" };
        else if (block?.type === "tool_use") {
          blocks[event.index] = { type: "tool_use", id: block.id, name: block.name, input: {}, json: "" };
          onEvent?.({ type: "tool_use_start", id: block.id, name: block.name });
        }
        break;
      }
      case "content_block_delta": {
        const block = blocks[event.index];
        if (event.delta?.type === "text_delta" && block?.type === "text") {
          block.text += event.delta.text;
          onEvent?.({ type: "text", text: event.delta.text });
        } else if (event.delta?.type === "input_json_delta" && block?.type === "tool_use") {
          block.json += event.delta.partial_json;
        }
        break;
      }
      case "message_delta":
        if (event.delta?.stop_reason) stopReason = event.delta.stop_reason;
        if (event.usage?.output_tokens !== undefined) usage.outputTokens = event.usage.output_tokens;
        break;
      case "message_stop":
        sawStop = true;
        break;
      case "error":
        throw new ModelError(
          `the model's stream reported an error: ${event.error?.message ?? "unknown"}`,
          undefined,
          true,
        );
    }
  }
  if (!sawStop)
    throw new ModelError("the model's stream ended before the reply was complete", undefined, true);
  const content = blocks.filter(Boolean).map((block) => {
    if (block.type === "text") return block;
    return { type: "tool_use" as const, id: block.id, name: block.name, input: parseToolInput(block.json) };
  });
  return { content, stopReason, usage, model };
}
