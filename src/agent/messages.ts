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

/** The key under which a tool call's unparseable arguments are kept (the API needs an object as input). */
const UNPARSED_INPUT = "__unparsed_input";

/** A streamed tool call's arguments; unparseable JSON is kept, with why, so the loop can tell the model. */
export function parseToolInput(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json);
  } catch (error) {
    return { [UNPARSED_INPUT]: json, problem: (error as Error).message };
  }
}

/** The raw text and parse error of arguments parseToolInput could not parse; undefined for parsed ones. */
export function unparsedInput(input: unknown): { json: string; problem: string } | undefined {
  const record = input as Record<string, unknown> | null;
  return typeof record?.[UNPARSED_INPUT] === "string"
    ? { json: record[UNPARSED_INPUT] as string, problem: String(record.problem) }
    : undefined;
}
