import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { HostCapability } from "../../core/host.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { describeCron, parseCron } from "../../schedule/cron.js";
import { cronSlot, MAX_CRON_JOBS } from "../../schedule/scheduler.js";
import { localTime } from "./format.js";

export const cronCreateTool = defineTool({
  name: ToolName.CronCreate,
  description: [
    "Schedules a prompt to run later in this conversation, once or on a repeating schedule: to check on a build, remind, poll.",
    "",
    '- cron: a standard 5-field expression in local time (minute hour day-of-month month day-of-week), e.g. "*/10 * * * *", "0 9 * * 1-5".',
    "- recurring (default true): false runs it once, at the next matching time, then removes it.",
    "- durable (default false): true keeps the job with the session, so it still runs after a restart.",
    `- At most ${MAX_CRON_JOBS} jobs per session; see them with ${ToolName.CronList}, remove them with ${ToolName.CronDelete}.`,
  ].join("\n"),
  // It only queues prompts for this same conversation, whose tool calls are each judged when they run.
  permissionLevel: PermissionLevel.None,
  requires: [HostCapability.Prompts],
  inputSchema: z.strictObject({
    cron: z.string().min(1).describe("5-field cron expression, local time."),
    prompt: z.string().min(1).describe("The prompt to run when the job fires."),
    recurring: z.boolean().default(true).describe("Repeat on every match (true) or run once (false)."),
    durable: z.boolean().default(false).describe("Keep the job across restarts of the session."),
  }),
  async execute(input, ctx) {
    let schedule: ReturnType<typeof parseCron>;
    try {
      schedule = parseCron(input.cron);
    } catch (error) {
      throw new InputError((error as Error).message);
    }
    const scheduler = ctx.session.get(cronSlot);
    if (scheduler.size >= MAX_CRON_JOBS) {
      throw new InputError(
        `This session already has ${scheduler.size} cron jobs, the most it may hold (${MAX_CRON_JOBS}). Delete some with ${ToolName.CronDelete} (see them with ${ToolName.CronList}).`,
      );
    }
    if (schedule.nextAfter(Date.now()) === undefined) {
      throw new InputError(
        `"${input.cron}" never matches a future time (e.g. February 30); nothing was scheduled.`,
      );
    }
    scheduler.attach(ctx.host);
    const job = scheduler.add({
      cron: schedule.expression,
      prompt: input.prompt,
      recurring: input.recurring,
      durable: input.durable,
    });
    return ToolResult.success(
      `Scheduled ${job.id}: ${describeCron(schedule)} (${input.recurring ? "recurring" : "once"}${input.durable ? ", durable" : ""}). Next run: ${localTime(job.nextRun)}.`,
      { id: job.id, cron: job.cron, nextRun: job.nextRun, recurring: job.recurring, durable: job.durable },
    );
  },
});
