/** What every tool call returns. Tools never throw to their caller: failures are results too. */

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ImageBlock {
  type: "image";
  /** Base64-encoded image bytes. */
  data: string;
  mimeType: string;
}

export type ContentBlock = TextBlock | ImageBlock;

export interface ToolResult {
  content: ContentBlock[];
  isError: boolean;
  /** Structured detail for hosts (patches, exit codes, task ids); never shown to the model. */
  metadata?: Record<string, unknown>;
}

const TOOL_USE_ERROR_OPEN = "<tool_use_error>";
const TOOL_USE_ERROR_CLOSE = "</tool_use_error>";

function blocks(content: string | ContentBlock[]): ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

export const ToolResult = {
  success(content: string | ContentBlock[], metadata?: Record<string, unknown>): ToolResult {
    return metadata
      ? { content: blocks(content), isError: false, metadata }
      : { content: blocks(content), isError: false };
  },

  /** A failure that happened while the tool ran (missing file, non-zero exit, time-out). */
  error(message: string, metadata?: Record<string, unknown>): ToolResult {
    return metadata
      ? { content: blocks(message), isError: true, metadata }
      : { content: blocks(message), isError: true };
  },

  /**
   * A call refused before it ran (bad input, not read yet, no match): wrapped in <tool_use_error> as
   * Claude Code does, so models trained on it recognise that nothing happened.
   */
  rejected(message: string, metadata?: Record<string, unknown>): ToolResult {
    return ToolResult.error(`${TOOL_USE_ERROR_OPEN}${message}${TOOL_USE_ERROR_CLOSE}`, metadata);
  },

  /** True for a well-formed result: a content array of text and image blocks, and a boolean isError. */
  isValid(value: unknown): value is ToolResult {
    if (typeof value !== "object" || value === null) return false;
    const { content, isError } = value as Partial<ToolResult>;
    return (
      typeof isError === "boolean" &&
      Array.isArray(content) &&
      content.every(
        (b: Partial<ContentBlock> | null) =>
          (b?.type === "text" && typeof b.text === "string") ||
          (b?.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string"),
      )
    );
  },

  withMetadata(result: ToolResult, metadata: Record<string, unknown>): ToolResult {
    return { ...result, metadata: { ...result.metadata, ...metadata } };
  },

  /** All text blocks joined; image blocks are left out. */
  text(result: ToolResult): string {
    return result.content
      .filter((b): b is TextBlock => b.type === "text")
      .map((b) => b.text)
      .join("\n");
  },
};
