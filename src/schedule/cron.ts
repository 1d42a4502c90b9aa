import { Cron } from "croner";

/** The five fields of a cron expression, in order, with their ranges for error messages. */
const FIELDS = [
  { name: "minute", range: "0-59" },
  { name: "hour", range: "0-23" },
  { name: "day of month", range: "1-31" },
  { name: "month", range: "1-12 or JAN-DEC" },
  { name: "day of week", range: "0-7 (0 and 7 are Sunday) or SUN-SAT" },
] as const;

/** A parsed 5-field cron expression in local time. */
export interface CronSchedule {
  expression: string;
  fields: string[];
  /** The first run strictly after `from`, or undefined when the schedule never runs again. */
  nextAfter(from: number): number | undefined;
}

function compile(expression: string): Cron {
  // `paused`: croner only computes times here; our scheduler arms its own (injectable) timers.
  return new Cron(expression, { paused: true, mode: "5-part", domAndDow: false });
}

/**
 * Parses a standard 5-field cron expression (minute hour day-of-month month day-of-week). An invalid one
 * throws an Error naming the field that is wrong and the values it takes.
 */
export function parseCron(expression: string): CronSchedule {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === "") {
    throw new Error(
      `"${expression}" has ${fields[0] === "" ? 0 : fields.length} field${fields.length === 1 ? "" : "s"}; a cron expression has exactly 5: minute hour day-of-month month day-of-week (e.g. "*/5 * * * *", "0 9 * * 1-5").`,
    );
  }
  fields.forEach((field, i) => {
    const probe = ["*", "*", "*", "*", "*"];
    probe[i] = field;
    try {
      compile(probe.join(" "));
    } catch {
      const { name, range } = FIELDS[i]!;
      throw new Error(
        `The ${name} field "${field}" (field ${i + 1} of "${expression}") is invalid: it takes ${range}, lists (1,15), ranges (1-5) and steps (*/10).`,
      );
    }
  });
  let cron: Cron;
  try {
    cron = compile(fields.join(" "));
  } catch (error) {
    throw new Error(`"${expression}" is not a valid cron expression: ${(error as Error).message}.`);
  }
  return {
    expression: fields.join(" "),
    fields,
    nextAfter(from) {
      return cron.nextRun(new Date(from))?.getTime();
    },
  };
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const isNumber = (f: string) => /^\d+$/.test(f);
const two = (n: string) => n.padStart(2, "0");

function listOf(field: string, names: string[], offset: number): string {
  return field
    .split(",")
    .map((part) => {
      const [from, to] = part.split("-");
      const name = (v: string | undefined) =>
        v && isNumber(v) ? (names[Number(v) - offset] ?? v) : (v ?? "");
      return to !== undefined ? `${name(from)} to ${name(to)}` : name(from);
    })
    .join(", ");
}

/** A schedule in words ("every 5 minutes", "at 09:00 on Monday to Friday"); uncommon forms list their fields. */
export function describeCron(schedule: CronSchedule): string {
  const [minute, hour, dom, month, dow] = schedule.fields as [string, string, string, string, string];
  let when: string;
  if (minute === "*" && hour === "*") when = "every minute";
  else if (/^\*\/\d+$/.test(minute) && hour === "*") when = `every ${minute.slice(2)} minutes`;
  else if (isNumber(minute) && hour === "*") when = `every hour at minute ${minute}`;
  else if (isNumber(minute) && /^\*\/\d+$/.test(hour))
    when = `every ${hour.slice(2)} hours at minute ${minute}`;
  else if (isNumber(minute) && isNumber(hour)) when = `at ${two(hour)}:${two(minute)}`;
  else if (isNumber(minute)) when = `at minute ${minute} of hours ${hour}`;
  else when = `at minutes ${minute} of ${hour === "*" ? "every hour" : `hours ${hour}`}`;
  const parts = [when];
  if (dom !== "*") parts.push(`on day ${dom} of the month`);
  if (month !== "*") parts.push(`in ${/^[\d,-]+$/.test(month) ? listOf(month, MONTHS, 1) : month}`);
  if (dow !== "*") parts.push(`on ${/^[\d,-]+$/.test(dow) ? listOf(dow, DAYS, 0) : dow}`);
  if (dom === "*" && dow === "*" && isNumber(hour)) parts.push("every day");
  return parts.join(" ");
}
