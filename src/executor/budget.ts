import { SPILL_HEAD_CHARS, SPILL_TAIL_CHARS } from "../core/limits.js";
import type { ContentBlock, ToolResult } from "../core/result.js";
import type { Session } from "../core/session.js";
import { spilledPreview, spillToFile } from "../core/spill.js";

/**
 * Keeps a result within its tool's budget: text past `maxChars` is spilled to a file and the result
 * keeps its head and tail. Images pass through untouched.
 */
export function applyResultBudget(
  result: ToolResult,
  maxChars: number,
  session: Session,
  toolName: string,
): ToolResult {
  const texts = result.content.filter((b) => b.type === "text");
  const total = texts.reduce((n, b) => n + b.text.length, 0);
  if (total <= maxChars) return result;
  const full = texts.map((b) => b.text).join("\n");
  const path = spillToFile(session, full, toolName.replace(/[^A-Za-z0-9_-]/g, "_"));
  const headChars = Math.min(SPILL_HEAD_CHARS, Math.floor(maxChars * 0.8));
  const tailChars = Math.min(SPILL_TAIL_CHARS, Math.floor(maxChars * 0.15));
  const preview = spilledPreview(
    full.slice(0, headChars),
    full.slice(full.length - tailChars),
    full.length,
    path,
  );
  const images = result.content.filter((b) => b.type === "image");
  const content: ContentBlock[] = [{ type: "text", text: preview }, ...images];
  return { ...result, content, metadata: { ...result.metadata, spilledTo: path, fullLength: full.length } };
}
