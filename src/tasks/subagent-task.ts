import { join } from "node:path";
import type { ToolContext } from "../core/context.js";
import type { SubagentRequest, SubagentResult } from "../core/host.js";
import { SPILL_HEAD_CHARS, SPILL_TAIL_CHARS } from "../core/limits.js";
import { OutputCapture } from "../process/capture.js";
import { type RunningTask, taskStoreSlot } from "./store.js";

/** How a background sub-agent's task ends. */
type EndStatus = "completed" | "failed" | "killed";

/** Characters of a background sub-agent's output TaskOutput shows whole. */
const AGENT_INLINE_CHARS = 30_000;

/**
 * Starts a sub-agent as a task of the session: its steps and final answer go to the task's output, TaskOutput
 * reads them, TaskStop (or the session's end) cancels it.
 */
export function startBackgroundSubagent(
  ctx: ToolContext,
  request: SubagentRequest,
  run: (signal: AbortSignal, onProgress: (line: string) => void) => Promise<SubagentResult>,
): RunningTask {
  const store = ctx.session.get(taskStoreSlot);
  const task = store.add("agent", request.description, (id) => {
    const capture = new OutputCapture({
      inlineChars: AGENT_INLINE_CHARS,
      headChars: SPILL_HEAD_CHARS,
      tailChars: SPILL_TAIL_CHARS,
      filePath: () => join(ctx.session.dir, `${id}.output`),
      eagerFile: true,
    });
    const write = (text: string) => capture.write(Buffer.from(text, "utf8"));
    const controller = new AbortController();
    const settled = run(controller.signal, (line) => write(`→ ${line}\n`))
      .then(
        (result): EndStatus => {
          write(
            `\n${result.text}\n\n[agent ${result.agentId}: ${result.toolUses} tool uses, ${result.inputTokens + result.outputTokens} tokens, ${result.durationMs} ms]\n`,
          );
          return result.isError ? (controller.signal.aborted ? "killed" : "failed") : "completed";
        },
        (error: unknown): EndStatus => {
          write(`\nThe sub-agent failed: ${(error as Error).message}\n`);
          return "failed";
        },
      )
      .then((status) => {
        capture.finish();
        const self = store.get(id)!;
        self.status = status;
        self.endedAt = Date.now();
      });
    return {
      outputFile: capture.file!,
      output: () => capture.snapshot(),
      settled,
      stop: async () => {
        controller.abort("stopped by TaskStop");
        await settled;
      },
    };
  });
  return task as RunningTask;
}
