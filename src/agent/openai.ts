import type { AssistantTurn, ImagePart, Message, StopReason, TextPart, ToolUsePart } from "./messages.js";
import { emptyUsage, parseToolInput } from "./messages.js";
import {
  guardedStream,
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type StreamEvent,
} from "./provider.js";

export interface OpenAIOptions {
  /** Local servers (Ollama, vLLM, LM Studio) take any key. */
  apiKey: string;
  /** The server's /v1 URL, e.g. http://127.0.0.1:11434/v1 for Ollama. */
  baseURL: string;
  idleMs: number;
}

type ChatMessage =
  | { role: "system" | "assistant"; content: string | null; tool_calls?: unknown[] }
  | { role: "user"; content: string | Array<Record<string, unknown>> }
  | { role: "tool"; tool_call_id: string; content: string };

function userContent(parts: Array<TextPart | ImagePart>): ChatMessage {
  if (parts.every((p) => p.type === "text")) {
    return { role: "user", content: parts.map((p) => (p as TextPart).text).join("\n") };
  }
  return {
    role: "user",
    content: parts.map((p) =>
      p.type === "text"
        ? { type: "text", text: p.text }
        : { type: "image_url", image_url: { url: `data:${p.source.media_type};base64,${p.source.data}` } },
    ),
  };
}

/** The conversation in chat-completions form: tool results become `tool` messages, tool calls `tool_calls`. */
export function toChatMessages(system: string, messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "system", content: system }];
  for (const message of messages) {
    if (message.role === "assistant") {
      const text = message.content.filter((p): p is TextPart => p.type === "text").map((p) => p.text);
      const calls = message.content.filter((p): p is ToolUsePart => p.type === "tool_use");
      out.push({
        role: "assistant",
        content: text.length > 0 ? text.join("") : null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
              })),
            }
          : {}),
      });
      continue;
    }
    const rest: Array<TextPart | ImagePart> = [];
    const images: ImagePart[] = [];
    for (const part of message.content) {
      if (part.type === "tool_result") {
        const text = part.content.map((c) => (c.type === "text" ? c.text : "[image]")).join("\n");
        out.push({
          role: "tool",
          tool_call_id: part.tool_use_id,
          content: part.is_error ? `Error: ${text}` : text,
        });
        // Chat completions take images only in user messages: they follow the tool results.
        images.push(...part.content.filter((c): c is ImagePart => c.type === "image"));
      } else if (part.type === "text" || part.type === "image") rest.push(part);
    }
    if (images.length > 0) rest.push(...images);
    if (rest.length > 0) out.push(userContent(rest));
  }
  return out;
}

function stopReasonOf(finish: string | null | undefined): StopReason {
  if (finish === "tool_calls" || finish === "function_call") return "tool_use";
  if (finish === "length") return "max_tokens";
  return "end_turn";
}

/** OpenAI-compatible chat completions, streamed: the same tools for local models. */
export function openAIProvider(options: OpenAIOptions): ModelProvider {
  let client: import("openai").default | undefined;
  return {
    name: "openai",
    async send(request: ModelRequest, signal: AbortSignal, onEvent?: (event: StreamEvent) => void) {
      if (!client) {
        const { default: OpenAI } = await import("openai");
        client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL, maxRetries: 0 });
      }
      return guardedStream(signal, options.idleMs, async (streamSignal, tick) => {
        const stream = await client!.chat.completions.create(
          {
            model: request.model,
            messages: toChatMessages(request.system, request.messages) as never,
            max_tokens: request.maxTokens,
            stream: true,
            stream_options: { include_usage: true },
            ...(request.tools.length > 0
              ? {
                  tools: request.tools.map((t) => ({
                    type: "function" as const,
                    function: { name: t.name, description: t.description, parameters: t.input_schema },
                  })),
                }
              : {}),
          },
          { signal: streamSignal },
        );
        const text: TextPart = { type: "text", text: "" };
        const calls: Array<{ id: string; name: string; args: string }> = [];
        const usage = emptyUsage();
        let finish: string | null | undefined;
        let model = request.model;
        for await (const chunk of stream) {
          tick();
          model = chunk.model ?? model;
          if (chunk.usage) {
            usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
            usage.outputTokens = chunk.usage.completion_tokens ?? 0;
            usage.cacheReadTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
          }
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.delta?.content) {
            text.text += choice.delta.content;
            onEvent?.({ type: "text", text: choice.delta.content });
          }
          for (const call of choice.delta?.tool_calls ?? []) {
            const slot = (calls[call.index] ??= { id: "", name: "", args: "" });
            if (call.id) slot.id = call.id;
            if (call.function?.name) {
              slot.name += call.function.name;
              onEvent?.({ type: "tool_use_start", id: slot.id, name: slot.name });
            }
            if (call.function?.arguments) slot.args += call.function.arguments;
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
        // Every complete reply ends with a finish reason; a stream that ends without one was cut short.
        if (!finish)
          throw new ModelError("the model's stream ended before the reply was complete", undefined, true);
        const content: AssistantTurn["content"] = text.text ? [text] : [];
        for (const [i, call] of calls.entries()) {
          content.push({
            type: "tool_use",
            id: call.id || `call_${i}`,
            name: call.name,
            input: parseToolInput(call.args),
          });
        }
        const stopReason = calls.length > 0 ? "tool_use" : stopReasonOf(finish);
        return { content, stopReason, usage, model };
      });
    },
  };
}
