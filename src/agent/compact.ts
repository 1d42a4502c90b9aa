import { KEEP_RECENT_TOOL_RESULTS } from "./limits.js";
import type { Message, ToolResultPart } from "./messages.js";

/** Characters per token, roughly, for English and code: enough to decide when to compact. */
const CHARS_PER_TOKEN = 4;
/** What an image costs in the context window, roughly. */
const IMAGE_TOKENS = 1_600;

/** A rough token count of a conversation (the API's own count comes back with each reply). */
export function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  let images = 0;
  for (const message of messages) {
    for (const part of message.content) {
      if (part.type === "text") chars += part.text.length;
      else if (part.type === "image") images++;
      else if (part.type === "tool_use") chars += JSON.stringify(part.input ?? {}).length + part.name.length;
      else {
        for (const c of part.content) {
          if (c.type === "text") chars += c.text.length;
          else images++;
        }
      }
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}

/**
 * Replaces the content of all but the most recent tool results with a one-line note, keeping every
 * tool_use/tool_result pair (the API requires them). Returns how many results were elided.
 */
export function elideOldToolResults(messages: Message[], keep = KEEP_RECENT_TOOL_RESULTS): number {
  const results: ToolResultPart[] = [];
  for (const message of messages) {
    for (const part of message.content) if (part.type === "tool_result") results.push(part);
  }
  let elided = 0;
  for (const part of results.slice(0, Math.max(0, results.length - keep))) {
    const size = part.content.reduce(
      (n, c) => n + (c.type === "text" ? c.text.length : IMAGE_TOKENS * CHARS_PER_TOKEN),
      0,
    );
    const note = `[old tool output elided to save context: ${size} characters]`;
    if (part.content.length === 1 && part.content[0]!.type === "text" && part.content[0]!.text === note)
      continue;
    part.content = [{ type: "text", text: note }];
    elided++;
  }
  return elided;
}

export const SUMMARY_REQUEST = `Summarise this conversation so far for yourself, so that you can continue the task with
only the summary: the user's goal and instructions, what has been done (files read and changed, commands run and
their outcomes), decisions made, and what remains. Be complete but concise; use plain text.`;

/** The history after a summary: one user message that carries it and asks to go on. */
export function summarizedHistory(summary: string): Message[] {
  return [
    {
      role: "user",
      content: [
        {
          type: "text",
          text: `This conversation was compacted to fit the context window. Summary of everything so far:\n\n${summary}\n\nContinue the task from here.`,
        },
      ],
    },
  ];
}
