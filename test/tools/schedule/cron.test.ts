import { describe, expect, it } from "vitest";
import { createHost, type PromptOrigin } from "../../../src/core/host.js";
import { ToolResult } from "../../../src/core/result.js";
import { Session } from "../../../src/core/session.js";
import { runTool } from "../../../src/executor/run.js";
import { autoHandler } from "../../../src/permissions/handlers.js";
import { describeCron, parseCron } from "../../../src/schedule/cron.js";
import { type Clock, cronSlot, MAX_CRON_JOBS, realClock } from "../../../src/schedule/scheduler.js";
import { testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, name: string, input: Record<string, unknown>) {
  const result = await runTool(name, input, ctx);
  return { result, text: ToolResult.text(result), meta: result.metadata ?? {} };
}

/** A clock that moves only when told to, firing the timers that come due. */
function fakeClock(start: number) {
  let now = start;
  let next = 0;
  const timers = new Map<number, { at: number; fire: () => void }>();
  const clock: Clock = {
    now: () => now,
    setTimeout: (fire, ms) => {
      timers.set(++next, { at: now + ms, fire });
      return next;
    },
    clearTimeout: (handle) => timers.delete(handle as number),
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = Math.max(now, due[1].at);
      due[1].fire();
    }
    now = end;
  };
  return { clock, advance, pending: () => timers.size };
}

function promptHost(ran: Array<{ prompt: string; origin: PromptOrigin }>) {
  return createHost(
    {
      runPrompt: async (prompt, origin) => {
        ran.push({ prompt, origin });
      },
    },
    autoHandler,
  );
}

/** 2026-03-02 08:59:30 local time, a Monday. */
const MONDAY = new Date(2026, 2, 2, 8, 59, 30).getTime();

describe("cron expressions", () => {
  it("names the wrong field of an invalid expression", () => {
    expect(() => parseCron("61 * * * *")).toThrow(/minute field "61".*0-59/);
    expect(() => parseCron("0 24 * * *")).toThrow(/hour field "24"/);
    expect(() => parseCron("0 0 32 * *")).toThrow(/day of month field "32"/);
    expect(() => parseCron("0 0 * 13 *")).toThrow(/month field "13"/);
    expect(() => parseCron("0 0 * * 9")).toThrow(/day of week field "9"/);
    expect(() => parseCron("* * * *")).toThrow(/has 4 fields; a cron expression has exactly 5/);
    expect(() => parseCron("0 * * * * *")).toThrow(/has 6 fields/);
  });

  it("says a schedule in words", () => {
    const words = (e: string) => describeCron(parseCron(e));
    expect(words("* * * * *")).toBe("every minute");
    expect(words("*/5 * * * *")).toBe("every 5 minutes");
    expect(words("15 * * * *")).toBe("every hour at minute 15");
    expect(words("0 9 * * *")).toBe("at 09:00 every day");
    expect(words("30 8 * * 1-5")).toBe("at 08:30 on Monday to Friday");
    expect(words("0 0 1 1 *")).toBe("at 00:00 on day 1 of the month in January");
  });
});

describe("CronCreate, CronList, CronDelete", () => {
  it("fires a recurring job into the host's prompt runner on every match (fake clock)", async () => {
    const ran: Array<{ prompt: string; origin: PromptOrigin }> = [];
    const ctx = testContext({ host: promptHost(ran) });
    const time = fakeClock(MONDAY);
    ctx.session.get(cronSlot).useClock(time.clock);
    const created = await call(ctx, "CronCreate", { cron: "0 9 * * 1-5", prompt: "check the build" });
    expect(created.result.isError).toBe(false);
    expect(created.text).toContain("at 09:00 on Monday to Friday (recurring)");
    const id = created.meta.id as string;
    time.advance(29_000);
    expect(ran).toEqual([]);
    time.advance(1_000);
    expect(ran).toEqual([{ prompt: "check the build", origin: { kind: "cron", id } }]);
    time.advance(24 * 3600_000);
    expect(ran).toHaveLength(2);
    const list = await call(ctx, "CronList", {});
    expect(list.text).toContain(
      `${id}: at 09:00 on Monday to Friday [0 9 * * 1-5] (recurring); next run 2026-03-04 09:00`,
    );
    expect(list.text).toContain('prompt: "check the build"');
    expect((await call(ctx, "CronDelete", { id })).text).toContain(`Deleted cron job ${id}`);
    time.advance(7 * 24 * 3600_000);
    expect(ran).toHaveLength(2);
    expect(time.pending()).toBe(0);
    expect((await call(ctx, "CronList", {})).text).toBe("No cron jobs are scheduled.");
  });

  it("removes a one-shot job after it fires", async () => {
    const ran: Array<{ prompt: string; origin: PromptOrigin }> = [];
    const ctx = testContext({ host: promptHost(ran) });
    const time = fakeClock(MONDAY);
    ctx.session.get(cronSlot).useClock(time.clock);
    await call(ctx, "CronCreate", { cron: "*/10 * * * *", prompt: "once", recurring: false });
    time.advance(60 * 60_000);
    expect(ran.map((r) => r.prompt)).toEqual(["once"]);
    expect(ctx.session.get(cronSlot).list()).toEqual([]);
  });

  it("keeps durable jobs in the saved session and runs them in the next process; others end with this one", async () => {
    const ran: Array<{ prompt: string; origin: PromptOrigin }> = [];
    const ctx = testContext({ host: promptHost(ran) });
    const time = fakeClock(MONDAY);
    ctx.session.get(cronSlot).useClock(time.clock);
    const durable = (await call(ctx, "CronCreate", { cron: "0 9 * * *", prompt: "durable", durable: true }))
      .meta.id;
    await call(ctx, "CronCreate", { cron: "0 9 * * *", prompt: "transient" });
    const saved = JSON.parse(JSON.stringify(ctx.session.snapshot()));
    await ctx.session.dispose();

    const laterRan: Array<{ prompt: string; origin: PromptOrigin }> = [];
    const session = new Session({ saved });
    const later = testContext({ session, host: promptHost(laterRan) });
    expect(
      later.session
        .get(cronSlot)
        .list()
        .map((j) => j.id),
    ).toEqual([durable]);
    // The saved next run (09:00) has passed by the time this process starts: it fires at once.
    const laterTime = fakeClock(MONDAY + 3600_000);
    later.session.get(cronSlot).useClock(laterTime.clock);
    laterTime.advance(0);
    expect(laterRan.map((r) => r.prompt)).toEqual(["durable"]);
    expect(ran).toEqual([]);
  });

  it("rejects invalid expressions naming the field, more than the limit, and unknown ids", async () => {
    const ctx = testContext({ host: promptHost([]) });
    const bad = await call(ctx, "CronCreate", { cron: "0 25 * * *", prompt: "x" });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain('The hour field "25"');
    const never = await call(ctx, "CronCreate", { cron: "0 0 30 2 *", prompt: "x" });
    expect(never.text).toContain("never matches");
    for (let i = 0; i < MAX_CRON_JOBS; i++) {
      expect((await call(ctx, "CronCreate", { cron: "0 9 * * *", prompt: `job ${i}` })).result.isError).toBe(
        false,
      );
    }
    const over = await call(ctx, "CronCreate", { cron: "0 9 * * *", prompt: "one too many" });
    expect(over.result.isError).toBe(true);
    expect(over.text).toContain(`the most it may hold (${MAX_CRON_JOBS})`);
    const unknown = await call(ctx, "CronDelete", { id: "cron_nope" });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toContain('No cron job with id "cron_nope". Jobs of this session: cron_');
  });

  it("is not offered, and refused, where nothing runs prompts", async () => {
    const ctx = testContext();
    const refused = await call(ctx, "CronCreate", { cron: "* * * * *", prompt: "x" });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toContain("it needs a conversation to run prompts in");
  });

  it("fires for real: real timers, on a clock set one second before a minute starts", async () => {
    const fired: Array<{ prompt: string; at: number }> = [];
    let done: () => void = () => {};
    const firedOnce = new Promise<void>((resolve) => {
      done = resolve;
    });
    const host = createHost(
      {
        runPrompt: async (prompt) => {
          fired.push({ prompt, at: clock.now() });
          done();
        },
      },
      autoHandler,
    );
    // Real setTimeout; only the reading of the time is shifted, so the test waits one second, not a minute.
    const offset = 60_000 - (Date.now() % 60_000) - 1_000;
    const clock: Clock = { ...realClock, now: () => Date.now() + offset };
    const ctx = testContext({ host });
    ctx.session.get(cronSlot).useClock(clock);
    const created = await call(ctx, "CronCreate", { cron: "* * * * *", prompt: "tick", recurring: false });
    const next = created.meta.nextRun as number;
    expect(next - clock.now()).toBeLessThanOrEqual(1_000);
    await firedOnce;
    expect(fired).toEqual([{ prompt: "tick", at: expect.any(Number) }]);
    expect(fired[0]!.at).toBeGreaterThanOrEqual(next);
    expect(ctx.session.get(cronSlot).list()).toEqual([]);
  });
});
