import type { ToolContext } from "../core/context.js";
import { BATCH_CONCURRENCY } from "../core/limits.js";
import type { ToolResult } from "../core/result.js";
import { findTool } from "../registry.js";
import { validateInput } from "../schema/validate.js";
import { type RunOptions, runTool } from "./run.js";

export interface ToolCall {
  name: string;
  input: unknown;
  /** The model's tool_use id. */
  id?: string;
}

/** Whether a call may overlap other concurrency-safe calls; unknown tools and bad input fail fast, so they may. */
export function concurrencySafe(call: ToolCall, ctx: ToolContext): boolean {
  const tool = findTool(call.name, ctx);
  // An unknown tool fails fast without side effects; an MCP tool whose server is still connecting may not.
  if (!tool) return !call.name.startsWith("mcp__");
  const validation = validateInput(tool, call.input);
  if (!validation.ok) return true;
  try {
    return tool.isConcurrencySafe(validation.value);
  } catch {
    return false;
  }
}

async function runLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
) {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
}

/**
 * Runs a model turn's tool calls: each run of consecutive concurrency-safe calls (reads, searches) runs
 * in parallel; any other call runs alone, after everything before it. Results come back in call order.
 */
export async function runToolBatch(
  calls: readonly ToolCall[],
  ctx: ToolContext,
  options: Omit<RunOptions, "toolUseId"> = {},
): Promise<ToolResult[]> {
  const results: ToolResult[] = new Array(calls.length);
  // Judged once per call: validation is not free, and runTool validates again after the hooks anyway.
  const safe = calls.map((call) => concurrencySafe(call, ctx));
  let i = 0;
  while (i < calls.length) {
    if (!safe[i]) {
      results[i] = await runTool(calls[i]!.name, calls[i]!.input, ctx, {
        ...options,
        toolUseId: calls[i]!.id,
      });
      i++;
      continue;
    }
    let end = i;
    while (end < calls.length && safe[end]) end++;
    const group = calls.slice(i, end);
    const offset = i;
    await runLimited(group, BATCH_CONCURRENCY, async (call, k) => {
      results[offset + k] = await runTool(call.name, call.input, ctx, { ...options, toolUseId: call.id });
    });
    i = end;
  }
  return results;
}
