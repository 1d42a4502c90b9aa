import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A piece of per-session state, declared by the module that owns it (read-state by src/fs, the shell's
 * cwd and background jobs by src/process, todos by the todo tool). The session creates each slot's value
 * on first use, so two sessions in one process never share state and the core needs no list of them.
 */
export interface SessionSlot<T> {
  readonly key: string;
  create(session: Session): T;
  /** JSON form for `cc-tools run --session NAME`; slots without it live only as long as the process. */
  save?(value: T): unknown;
  load?(data: unknown, session: Session): T;
  dispose?(value: T): void | Promise<void>;
}

export interface SessionOptions {
  id?: string;
  /** Directory for this session's files (spilled output, job logs). A temp dir by default. */
  dir?: string;
  /** Saved slot values from an earlier process (see `snapshot()`). */
  saved?: Record<string, unknown>;
}

export class Session {
  readonly id: string;
  private directory: string | undefined;
  /** True when the session made its own temp dir (and so may remove it). */
  private ownsDirectory = false;
  private readonly values = new Map<string, unknown>();
  private readonly slots = new Map<string, SessionSlot<unknown>>();
  private readonly saved: Record<string, unknown>;
  private disposed = false;

  constructor(options: SessionOptions = {}) {
    this.id = options.id ?? randomUUID();
    this.directory = options.dir;
    this.saved = { ...options.saved };
  }

  /** The session's private directory, created on first use. */
  get dir(): string {
    if (this.disposed && this.directory) return this.directory;
    if (this.directory) {
      mkdirSync(this.directory, { recursive: true });
    } else {
      this.directory = mkdtempSync(join(tmpdir(), "cc-tools-session-"));
      this.ownsDirectory = true;
    }
    return this.directory;
  }

  get<T>(slot: SessionSlot<T>): T {
    if (this.values.has(slot.key)) return this.values.get(slot.key) as T;
    const saved = this.saved[slot.key];
    const value = saved !== undefined && slot.load ? slot.load(saved, this) : slot.create(this);
    this.values.set(slot.key, value);
    this.slots.set(slot.key, slot as SessionSlot<unknown>);
    return value;
  }

  /** Saved form of every slot that can be saved, for the next process of the same named session. */
  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = { ...this.saved };
    for (const [key, slot] of this.slots) {
      if (slot.save) out[key] = slot.save(this.values.get(key));
    }
    return out;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Ends the session: slots release what they hold (background jobs are killed). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const [key, slot] of this.slots) {
      await slot.dispose?.(this.values.get(key));
    }
    // An own temp dir that nothing was left in goes; files in it (spilled output, job logs) were named in
    // results, so they stay for whoever reads them.
    if (this.ownsDirectory && this.directory) {
      try {
        rmdirSync(this.directory);
      } catch {
        // not empty, or already gone
      }
    }
  }
}
