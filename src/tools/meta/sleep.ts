import { setTimeout as sleep } from "node:timers/promises";
import * as z from "zod";
import { formatDuration } from "../../core/duration.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";

/** Longest one Sleep call may wait: five minutes, so a waiting agent still checks in. */
export const MAX_SLEEP_MS = 300_000;

export const sleepTool = defineTool({
  name: ToolName.Sleep,
  description: [
    "Waits for the given time, then returns: to let a background job make progress, or to pause before checking something again.",
    "",
    `- duration_ms: at most ${MAX_SLEEP_MS} (five minutes). Cancelling the call wakes it at once.`,
    "- The result says how long it slept and whether it was interrupted.",
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    duration_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_SLEEP_MS)
      .describe(`How long to sleep, in milliseconds (0 to ${MAX_SLEEP_MS}).`),
  }),
  async execute(input, ctx) {
    const started = performance.now();
    const interrupted = await sleep(input.duration_ms, false, { signal: ctx.signal }).catch(() => true);
    const slept = Math.round(performance.now() - started);
    const text = interrupted
      ? `Interrupted after ${formatDuration(slept)} of the ${formatDuration(input.duration_ms)} requested.`
      : `Slept for ${formatDuration(slept)}.`;
    const metadata = { sleptMs: slept, requestedMs: input.duration_ms, interrupted };
    // An interrupted sleep is the call's own account of being cancelled: an error, as the executor expects.
    return interrupted ? ToolResult.error(text, metadata) : ToolResult.success(text, metadata);
  },
});
