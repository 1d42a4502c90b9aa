import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { cronSlot } from "../../schedule/scheduler.js";
import { jobData, jobLine } from "./format.js";

export const cronListTool = defineTool({
  name: ToolName.CronList,
  description: `Lists this session's cron jobs: id, the schedule in words, the next run in local time, and the prompt. Create them with ${ToolName.CronCreate}.`,
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({}),
  async execute(_input, ctx) {
    const jobs = ctx.session.get(cronSlot).list();
    if (jobs.length === 0) return ToolResult.success("No cron jobs are scheduled.", { jobs: [] });
    return ToolResult.success(jobs.map(jobLine).join("\n"), { jobs: jobs.map(jobData) });
  },
});
