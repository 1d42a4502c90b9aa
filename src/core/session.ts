import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log } from "./log.js";
import { processAlive } from "./pid.js";

/**
 * A session's own directory is `cc-tools-session-<pid>-XXXXXX` in the temp dir: its owner is the process
 * that made it, and it lives as long as the session, unless the session keeps its files (the CLI's one-shot
 * runs, whose results name files the user reads after the process ended; their directory holds a
 * KEEP_MARKER file). What a process that died without disposing left is swept by the next process that
 * makes a session directory: at once when its owner is dead, or ORPHAN_SESSION_DIR_MS after for a kept
 * one; and, whatever the owner, once untouched for ABANDONED_SESSION_DIR_MS.
 */
const SESSION_DIR_PREFIX = "cc-tools-session-";
/** How long files of a session whose process is gone stay, for whoever reads the paths results named. */
const ORPHAN_SESSION_DIR_MS = 6 * 60 * 60_000;
/** A session directory untouched this long is removed even if a process of its pid still runs (pid reuse). */
const ABANDONED_SESSION_DIR_MS = 7 * 24 * 60 * 60_000;
/** Marks a session directory whose files are kept for a reader after the process. */
const KEEP_MARKER = ".cc-tools-keep";

let swept = false;

/** Removes session directories killed or finished processes left in the temp dir; best effort, once per process. */
export async function sweepSessionDirs(now = Date.now()): Promise<void> {
  const base = tmpdir();
  const names = await readdir(base).catch(() => [] as string[]);
  const uid = process.getuid?.();
  for (const name of names) {
    if (!name.startsWith(SESSION_DIR_PREFIX)) continue;
    const path = join(base, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
    const owner = /^cc-tools-session-(\d+)-/.exec(name);
    const pid = owner ? Number(owner[1]) : undefined;
    if (pid === process.pid) continue;
    const age = now - info.mtimeMs;
    const kept = pid === undefined || existsSync(join(path, KEEP_MARKER));
    const orphaned = (pid === undefined || !processAlive(pid)) && (!kept || age > ORPHAN_SESSION_DIR_MS);
    if (orphaned || age > ABANDONED_SESSION_DIR_MS)
      await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

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
  /**
   * Keep the files of an own temp dir when the session ends (they are swept later, see sweepSessionDirs):
   * for a process that prints results naming them and exits.
   */
  keepFiles?: boolean;
}

export class Session {
  /** Given, or made on first use: node:crypto is not loaded for a session that never needs its id. */
  private givenId: string | undefined;
  private directory: string | undefined;
  /** True when the session made its own temp dir (and so may remove it). */
  private ownsDirectory = false;
  private readonly values = new Map<string, unknown>();
  private readonly slots = new Map<string, SessionSlot<unknown>>();
  private readonly saved: Record<string, unknown>;
  private disposed = false;
  private readonly keepFiles: boolean;

  constructor(options: SessionOptions = {}) {
    this.givenId = options.id;
    this.directory = options.dir;
    this.saved = { ...options.saved };
    this.keepFiles = options.keepFiles ?? false;
  }

  get id(): string {
    this.givenId ??= randomUUID();
    return this.givenId;
  }

  /** The session's private directory, created on first use. */
  get dir(): string {
    if (this.disposed && this.directory) return this.directory;
    if (this.directory) {
      mkdirSync(this.directory, { recursive: true });
    } else {
      this.directory = mkdtempSync(join(tmpdir(), `${SESSION_DIR_PREFIX}${process.pid}-`));
      if (this.keepFiles) writeFileSync(join(this.directory, KEEP_MARKER), "");
      this.ownsDirectory = true;
      if (!swept) {
        swept = true;
        void sweepSessionDirs();
      }
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
    // Each slot releases what it holds even if another one could not: a failed removal must not leave
    // the next slot's background jobs running.
    for (const [key, slot] of this.slots) {
      try {
        await slot.dispose?.(this.values.get(key));
      } catch (error) {
        log.error(`the session could not release its ${key}`, error);
      }
    }
    // Spilled output and job logs were named in results, which end with the session; unless it keeps
    // its files for a reader after the process, the directory goes with everything in it.
    if (this.ownsDirectory && this.directory) {
      if (this.keepFiles) keepOnlyFiles(this.directory);
      else removeTree(this.directory);
    }
  }
}

/** Attempts at removing a session's directory while a process that is ending still writes into it. */
const REMOVE_ATTEMPTS = 5;
/** The wait before the first retry; each later one waits this much longer. */
const REMOVE_RETRY_MS = 20;

/**
 * Removes `path` and everything in it. A command that was just killed may still be writing there (its
 * shell's EXIT trap, a file its last line opens), which makes a directory found empty non-empty again at
 * its rmdir (ENOTEMPTY): the removal is tried again, and what still fails is logged, not thrown.
 */
export function removeTree(path: string): void {
  try {
    rmSync(path, {
      recursive: true,
      force: true,
      maxRetries: REMOVE_ATTEMPTS - 1,
      retryDelay: REMOVE_RETRY_MS,
    });
  } catch (error) {
    log.warn(`could not remove ${path}: ${(error as Error).message}`);
  }
}

/** Removes a kept directory that holds nothing but its marker. */
function keepOnlyFiles(dir: string): void {
  try {
    if (readdirSync(dir).every((name) => name === KEEP_MARKER)) rmSync(dir, { recursive: true, force: true });
  } catch {
    // already gone
  }
}
