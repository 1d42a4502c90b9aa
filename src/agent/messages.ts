/**
 * The conversation as the agent loop keeps it: the Anthropic Messages API's shapes, which the OpenAI-compatible
 * provider translates at its edge.
 */

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
}

export interface ToolUsePart {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultPart {
  type: "tool_result";
  tool_use_id: string;
  content: Array<TextPart | ImagePart>;
  is_error?: boolean;
}

export type ContentPart = TextPart | ImagePart | ToolUsePart | ToolResultPart;

export interface Message {
  role: "user" | "assistant";
  content: ContentPart[];
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn";

/** One model reply. */
export interface AssistantTurn {
  content: Array<TextPart | ToolUsePart>;
  stopReason: StopReason;
  usage: TokenUsage;
  model: string;
}

export function textOf(parts: readonly ContentPart[]): string {
  return parts
    .filter((p): p is TextPart => p.type === "text")
    .map((p) => p.text)
    .join("");
}

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** A streamed tool call's arguments; unparseable JSON is kept so the executor's validation can say what is wrong. */
export function parseToolInput(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json);
  } catch {
    return { __unparsed_input: json };
  }
}
