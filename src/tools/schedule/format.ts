import { describeCron, parseCron } from "../../schedule/cron.js";
import type { CronJob } from "../../schedule/scheduler.js";

/** A time in local time with its offset, as people read it: "2026-12-01 09:00 (UTC+01:00)". */
export function localTime(epochMs: number | undefined): string {
  if (epochMs === undefined) return "never";
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const zone = `UTC${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())} (${zone})`;
}

export function jobLine(job: CronJob): string {
  const kind = `${job.recurring ? "recurring" : "one-shot"}${job.durable ? ", durable" : ""}`;
  return `${job.id}: ${describeCron(parseCron(job.cron))} [${job.cron}] (${kind}); next run ${localTime(job.nextRun)}; prompt: ${JSON.stringify(job.prompt)}`;
}

export function jobData(job: CronJob) {
  return { ...job, schedule: describeCron(parseCron(job.cron)) };
}
