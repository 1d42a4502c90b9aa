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
