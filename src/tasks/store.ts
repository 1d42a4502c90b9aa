import type { SessionSlot } from "../core/session.js";
import type { OutputSnapshot } from "../process/capture.js";

/**
 * What a task is: a background shell command, a sub-agent, or a work item of the task list
 * (TaskCreate/TaskList). All share one id space per session, so TaskOutput and TaskStop take any id.
 */
export type TaskKind = "shell" | "agent" | "work";

/** `pending`/`in_progress` are a work item's states; runs go running → completed | failed | killed. */
export type TaskStatus = "pending" | "in_progress" | "running" | "completed" | "failed" | "killed";

/** Something that runs on its own (a shell command, a sub-agent): it has output and can be stopped. */
export interface TaskRun {
  readonly outputFile: string;
  /** What it has printed so far, bounded (whole when short, else head and tail). */
  output(): OutputSnapshot;
  /** Resolves when the run ends, however it ends; never rejects. */
  readonly settled: Promise<void>;
  /** Ends the run; resolves once it has ended. */
  stop(): Promise<void>;
}

export interface Task {
  readonly id: string;
  readonly kind: TaskKind;
  /** One line for listings: the command, the agent's job, the work item's subject. */
  description: string;
  status: TaskStatus;
  readonly createdAt: number;
  endedAt?: number;
  /** A finished command's exit code; null when a signal ended it. */
  exitCode?: number | null;
  /** Present on tasks that run (shells, agents); work items have none. */
  run?: TaskRun;
  /** Present on work items (TaskCreate): what the task list shows and tracks. */
  work?: WorkDetails;
}

/** A work item's own fields (Claude Code's TaskCreate/TaskUpdate). */
export interface WorkDetails {
  subject: string;
  /** What needs doing, in full; `description` on Task is the one-line subject. */
  detail: string;
  /** Present-tense form shown while it is in progress ("Running the tests"). */
  activeForm?: string;
  owner?: string;
  metadata: Record<string, unknown>;
  /** Ids of the items this one blocks, and of those blocking it; kept symmetric by the store. */
  blocks: string[];
  blockedBy: string[];
}

const WORK_STATUSES: readonly TaskStatus[] = ["pending", "in_progress", "completed"];

/** A saved work item, for a later process of the same session. */
interface SavedWork extends WorkDetails {
  id: string;
  status: TaskStatus;
  createdAt: number;
}

export type RunningTask = Task & { run: TaskRun };

export function isRunning(task: Task): task is RunningTask {
  return task.run !== undefined && task.status === "running";
}

/** A run of an earlier process of a named session (`cc-tools run --session`): it ended with that process. */
export interface PastRun {
  id: string;
  description: string;
  status: TaskStatus;
  exitCode?: number | null;
  outputFile: string;
}

/** The tasks of one session, in creation order. */
export class TaskStore {
  private readonly tasks = new Map<string, Task>();
  private readonly reported = new Set<string>();
  private readonly past = new Map<string, PastRun>();
  private counter = 0;

  /** The store of a later process: ids go on from the saved counter, so no output file is reused. */
  static restore(data: unknown): TaskStore {
    const store = new TaskStore();
    const saved = data as { counter?: unknown; past?: unknown } | undefined;
    if (typeof saved?.counter === "number" && Number.isInteger(saved.counter)) store.counter = saved.counter;
    if (Array.isArray(saved?.past)) {
      for (const run of saved.past as PastRun[]) {
        if (typeof run?.id === "string" && typeof run.outputFile === "string") store.past.set(run.id, run);
      }
    }
    const work = (data as { work?: unknown } | undefined)?.work;
    if (Array.isArray(work)) {
      for (const item of work as SavedWork[]) {
        if (typeof item?.id !== "string" || typeof item.subject !== "string") continue;
        if (!WORK_STATUSES.includes(item.status)) continue;
        const { id, status, createdAt, ...details } = item;
        store.tasks.set(id, {
          id,
          kind: "work",
          description: details.subject,
          status,
          createdAt,
          work: {
            ...details,
            metadata: details.metadata ?? {},
            blocks: details.blocks ?? [],
            blockedBy: details.blockedBy ?? [],
          },
        });
      }
    }
    return store;
  }

  /** What a later process needs: the counter, and every run (those still running end with this process). */
  save(): { counter: number; past: PastRun[]; work: SavedWork[] } {
    const runs = this.list()
      .filter((t) => t.run)
      .map((t) => ({
        id: t.id,
        description: t.description,
        status: t.status === "running" ? ("killed" as const) : t.status,
        exitCode: t.exitCode,
        outputFile: t.run!.outputFile,
      }));
    const work = this.list("work").map((t) => ({
      id: t.id,
      status: t.status,
      createdAt: t.createdAt,
      ...t.work!,
    }));
    return { counter: this.counter, past: [...this.past.values(), ...runs], work };
  }

  /** A run an earlier process of this session started. */
  pastRun(id: string): PastRun | undefined {
    return this.past.get(id);
  }

  /** Adds a task; `start` receives the new id (runs name their output file after it). */
  add(kind: TaskKind, description: string, start?: (id: string) => TaskRun): Task {
    const id = `${kind}_${++this.counter}`;
    const task: Task = {
      id,
      kind,
      description,
      status: start ? "running" : "pending",
      createdAt: Date.now(),
    };
    if (start) task.run = start(id);
    this.tasks.set(id, task);
    return task;
  }

  /** Adds a work item (TaskCreate); it starts pending. */
  addWork(details: Omit<WorkDetails, "blocks" | "blockedBy">): Task {
    const task = this.add("work", details.subject);
    task.work = { ...details, blocks: [], blockedBy: [] };
    return task;
  }

  /** Removes a work item and every dependency naming it. */
  removeWork(id: string): void {
    this.tasks.delete(id);
    for (const other of this.list("work")) {
      other.work!.blocks = other.work!.blocks.filter((b) => b !== id);
      other.work!.blockedBy = other.work!.blockedBy.filter((b) => b !== id);
    }
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  list(kind?: TaskKind): Task[] {
    const all = [...this.tasks.values()];
    return kind ? all.filter((t) => t.kind === kind) : all;
  }

  /** Runs that have ended since the model last heard of them, each returned once. */
  takeEndedUnreported(): Task[] {
    const ended = this.list().filter((t) => t.run && t.status !== "running" && !this.reported.has(t.id));
    for (const task of ended) this.reported.add(task.id);
    return ended;
  }

  /** The model has seen how this run ended (TaskOutput showed it), so no notice is due. */
  markReported(id: string): void {
    this.reported.add(id);
  }

  /** Stops every run still going; the session calls it when it ends. */
  async stopAll(): Promise<void> {
    await Promise.all(
      this.list()
        .filter(isRunning)
        .map((t) => t.run.stop()),
    );
  }
}

export const taskStoreSlot: SessionSlot<TaskStore> = {
  key: "tasks",
  create: () => new TaskStore(),
  save: (store) => store.save(),
  load: (data) => TaskStore.restore(data),
  dispose: (store) => store.stopAll(),
};
