import { setTimeout as sleep } from "node:timers/promises";
import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { renderOutput } from "../../process/render.js";
import { type Task, taskStoreSlot } from "../../tasks/store.js";
import { findRunTask } from "./lookup.js";

/** Claude Code's bounds for how long TaskOutput waits. */
const DEFAULT_WAIT_MS = 30_000;
const MAX_WAIT_MS = 600_000;

function describe(task: Task, retrieval: "success" | "timeout" | "not_ready", output: string): string {
  const lines = [
    `<retrieval_status>${retrieval}</retrieval_status>`,
    `<task_id>${task.id}</task_id>`,
    `<task_type>${task.kind}</task_type>`,
    `<status>${task.status}</status>`,
  ];
  if (task.exitCode !== undefined && task.exitCode !== null)
    lines.push(`<exit_code>${task.exitCode}</exit_code>`);
  const none = task.status === "running" ? "(no output yet)" : "(no output)";
  lines.push(output ? `<output>\n${output}\n</output>` : `<output>${none}</output>`);
  if (retrieval === "timeout") {
    lines.push(
      `The task is still running. Call ${ToolName.TaskOutput} again to keep waiting, or ${ToolName.TaskStop} to end it.`,
    );
  }
  return lines.join("\n");
}

export const taskOutputTool = defineTool({
  name: ToolName.TaskOutput,
  aliases: ["BashOutput"],
  description: [
    "Reads the output of a background task (a command started with run_in_background, or a sub-agent).",
    "",
    "- By default waits until the task ends, at most `timeout` ms (default 30000); block: false returns what it has printed so far at once.",
    "- Shows the task's status (running, completed, failed, killed) and exit code; long output is shown as its start and end plus the path of the file with all of it.",
  ].join("\n"),
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema: z.strictObject({
    task_id: z.string().describe("The id returned when the task was started."),
    block: z
      .boolean()
      .default(true)
      .describe("Wait for the task to finish (true) or return at once (false)."),
    timeout: z
      .number()
      .min(0)
      .max(MAX_WAIT_MS)
      .default(DEFAULT_WAIT_MS)
      .describe("How long to wait when blocking, in milliseconds."),
  }),
  async execute(input, ctx) {
    const task = findRunTask(ctx, input.task_id);
    let retrieval: "success" | "timeout" | "not_ready" = "success";
    if (task.status === "running") {
      if (input.block) {
        const waited = new AbortController();
        const ended = await Promise.race([
          task.run.settled.then(() => true),
          sleep(input.timeout, false, { signal: AbortSignal.any([ctx.signal, waited.signal]) }).catch(
            () => false,
          ),
        ]);
        waited.abort();
        if (!ended) retrieval = "timeout";
      } else {
        retrieval = "not_ready";
      }
    }
    if (task.status !== "running") ctx.session.get(taskStoreSlot).markReported(task.id);
    const text = describe(task, retrieval, renderOutput(task.run.output()));
    return ToolResult.success(text, {
      taskId: task.id,
      status: task.status,
      exitCode: task.exitCode,
      outputFile: task.run.outputFile,
    });
  },
});
