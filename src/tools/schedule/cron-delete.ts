import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { cronSlot } from "../../schedule/scheduler.js";

export const cronDeleteTool = defineTool({
  name: ToolName.CronDelete,
  description: `Cancels a cron job of this session by its id (from ${ToolName.CronCreate} or ${ToolName.CronList}); a durable job is removed from the saved session too.`,
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    id: z.string().describe("The job's id."),
  }),
  async execute(input, ctx) {
    const scheduler = ctx.session.get(cronSlot);
    const job = scheduler.get(input.id);
    if (!job) {
      const known = scheduler.list().map((j) => j.id);
      throw new InputError(
        `No cron job with id "${input.id}". ${known.length > 0 ? `Jobs of this session: ${known.join(", ")}.` : "This session has no cron jobs."}`,
      );
    }
    scheduler.delete(job.id);
    return ToolResult.success(`Deleted cron job ${job.id} (${job.cron}: ${JSON.stringify(job.prompt)}).`, {
      id: job.id,
    });
  },
});
