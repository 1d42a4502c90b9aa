import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { findRunTask } from "./lookup.js";

export const taskStopTool = defineTool({
  name: ToolName.TaskStop,
  aliases: ["KillShell", "KillBash"],
  description:
    "Stops a background task of this session (a run_in_background command or a sub-agent) together with every process it started. Takes the task id (shell_id is accepted too).",
  // Stopping only ends what this session itself started, with permission already granted: it can never
  // reach further than that grant, so there is nothing for a rule to decide.
  permissionLevel: PermissionLevel.None,
  // Needing no permission is not reading only: it kills process trees, and clients must not be told otherwise.
  readOnly: false,
  inputSchema: z.strictObject({
    task_id: z.string().optional().describe("The id of the task to stop."),
    shell_id: z.string().optional().describe("Same as task_id (the older name)."),
  }),
  async execute(input, ctx) {
    const id = input.task_id ?? input.shell_id;
    if (!id) throw new InputError("Pass task_id: the id returned when the task was started.");
    const task = findRunTask(ctx, id);
    if (task.status !== "running") {
      const code =
        task.exitCode === undefined || task.exitCode === null ? "" : `, exit code ${task.exitCode}`;
      throw new InputError(`Task ${id} has already ended (${task.status}${code}); there is nothing to stop.`);
    }
    await task.run.stop();
    return ToolResult.success(`Stopped task ${id} (${task.description}).`, {
      taskId: id,
      status: task.status,
    });
  },
});
