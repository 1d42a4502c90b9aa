import type { ToolContext } from "../../core/context.js";
import { ToolName } from "../../core/tool-names.js";
import { taskStoreSlot } from "../../tasks/store.js";

/** Longest command shown in a notice; the task id is what the model needs. */
const NOTICE_DESCRIPTION_CHARS = 80;

/**
 * One line per background run that ended since the model last heard of it, for the next shell result:
 * over MCP there is no other way to tell the model that a job finished.
 */
export function endedTaskNotices(ctx: ToolContext): string[] {
  return ctx.session
    .get(taskStoreSlot)
    .takeEndedUnreported()
    .map((task) => {
      const what =
        task.description.length > NOTICE_DESCRIPTION_CHARS
          ? `${task.description.slice(0, NOTICE_DESCRIPTION_CHARS)}…`
          : task.description;
      const code =
        task.exitCode === undefined || task.exitCode === null ? "" : `, exit code ${task.exitCode}`;
      return `Background task ${task.id} (${what}) has ended: ${task.status}${code}. Read its output with ${ToolName.TaskOutput} (task_id "${task.id}").`;
    });
}
