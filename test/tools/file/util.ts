import type { ToolContext } from "../../../src/core/context.js";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { testContext } from "../../helpers/context.js";

/** Runs a tool through the whole pipeline and returns its result with the text joined. */
export async function call(ctx: ToolContext, tool: string, input: Record<string, unknown>) {
  const result = await runTool(tool, input, ctx);
  return { ...result, text: ToolResult.text(result) };
}

export function fileContext(): ToolContext {
  return testContext();
}

/**
 * Bytes held in ArrayBuffers once every unreachable one is freed. V8 frees the backing stores a full
 * collection found unreachable on a background thread, after the collection has returned, and the next
 * collection first waits for that sweep to end. Two collections in a row therefore leave none of the
 * first one's garbage counted, however busy the machine: after one alone, a loaded two-core machine
 * still counted 5 to 8 MB of a test's 1 MB read chunks.
 */
export function settledArrayBufferBytes(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}
