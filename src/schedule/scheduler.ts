import { randomBytes } from "node:crypto";
import type { PromptOrigin } from "../core/host.js";
import { log } from "../core/log.js";
import type { SessionSlot } from "../core/session.js";
import { parseCron } from "./cron.js";

/** Most cron jobs one session may hold: a runaway loop of CronCreate stops here. */
export const MAX_CRON_JOBS = 50;

/** setTimeout's longest delay; a later run is reached by re-arming. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Time and timers, injectable so tests can move time instead of waiting for it. */
export interface Clock {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fire, ms) => {
    const timer = setTimeout(fire, ms);
    // A scheduled prompt does not keep a process alive that has nothing else to do.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface CronJob {
  id: string;
  cron: string;
  prompt: string;
  /** False for a one-shot job, removed once it fired. */
  recurring: boolean;
  /** Kept with the session, so a later process of it runs the job too. */
  durable: boolean;
  createdAt: number;
  /** When it runs next (epoch ms); undefined when the schedule has no further run. */
  nextRun: number | undefined;
  lastRun?: number;
}

/** Runs a job's prompt as a turn of a conversation: the host's prompt runner. */
export type PromptRunner = (prompt: string, origin: PromptOrigin) => Promise<void>;

/**
 * A session's cron jobs and their timers. Jobs fire into the prompt runner once one is attached (the
 * host's runPrompt); a durable job restored from a saved session is armed when the next context attaches.
 */
export class CronScheduler {
  private readonly jobs = new Map<string, CronJob>();
  private readonly timers = new Map<string, unknown>();
  private runner: PromptRunner | undefined;
  private host: object | undefined;
  private clock: Clock = realClock;
  private disposed = false;

  /** Swaps the clock (tests); re-arms every job against it. */
  useClock(clock: Clock): void {
    for (const id of [...this.timers.keys()]) this.disarm(id);
    this.clock = clock;
    if (this.runner) for (const job of this.jobs.values()) this.arm(job);
  }

  /**
   * Sets the host whose prompt runner runs the jobs, and arms every job; a job whose time passed while
   * nobody ran it fires now.
   */
  attach(host: { runPrompt?: PromptRunner }): void {
    if (this.host === host || !host.runPrompt) return;
    this.host = host;
    this.runner = (prompt, origin) => host.runPrompt!(prompt, origin);
    for (const job of this.jobs.values()) this.arm(job);
  }

  list(): CronJob[] {
    return [...this.jobs.values()];
  }

  get(id: string): CronJob | undefined {
    return this.jobs.get(id);
  }

  get size(): number {
    return this.jobs.size;
  }

  /** Adds a job (the expression must have been checked with parseCron). */
  add(spec: { cron: string; prompt: string; recurring: boolean; durable: boolean }): CronJob {
    const now = this.clock.now();
    const job: CronJob = {
      id: `cron_${randomBytes(4).toString("hex")}`,
      ...spec,
      createdAt: now,
      nextRun: parseCron(spec.cron).nextAfter(now),
    };
    this.jobs.set(job.id, job);
    if (this.runner) this.arm(job);
    return job;
  }

  delete(id: string): boolean {
    this.disarm(id);
    return this.jobs.delete(id);
  }

  /** Restores saved jobs (a later process of a named session). */
  restore(jobs: CronJob[]): void {
    for (const job of jobs) this.jobs.set(job.id, job);
  }

  dispose(): void {
    this.disposed = true;
    for (const id of [...this.timers.keys()]) this.disarm(id);
  }

  private disarm(id: string): void {
    const timer = this.timers.get(id);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.timers.delete(id);
  }

  private arm(job: CronJob): void {
    this.disarm(job.id);
    if (this.disposed || job.nextRun === undefined) return;
    const delay = Math.max(0, job.nextRun - this.clock.now());
    const timer = this.clock.setTimeout(
      () => {
        this.timers.delete(job.id);
        if (this.clock.now() < job.nextRun!) this.arm(job);
        else this.fire(job);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    this.timers.set(job.id, timer);
  }

  private fire(job: CronJob): void {
    const now = this.clock.now();
    job.lastRun = now;
    if (job.recurring) {
      job.nextRun = parseCron(job.cron).nextAfter(now);
      this.arm(job);
    } else {
      this.jobs.delete(job.id);
    }
    this.runner?.(job.prompt, { kind: "cron", id: job.id }).catch((error) =>
      log.error(`cron job ${job.id} (${job.cron}) failed to run its prompt`, error),
    );
  }
}

function isValidJob(job: CronJob | null): boolean {
  if (typeof job?.id !== "string" || typeof job.cron !== "string" || typeof job.prompt !== "string")
    return false;
  try {
    parseCron(job.cron);
    return true;
  } catch {
    return false;
  }
}

export const cronSlot: SessionSlot<CronScheduler> = {
  key: "cron",
  create: () => new CronScheduler(),
  // Only durable jobs outlive the process; the others belong to this run.
  save: (scheduler) => scheduler.list().filter((job) => job.durable),
  load: (data) => {
    const scheduler = new CronScheduler();
    if (Array.isArray(data)) {
      scheduler.restore((data as CronJob[]).filter(isValidJob));
    }
    return scheduler;
  },
  dispose: (scheduler) => scheduler.dispose(),
};
