import { randomBytes } from "node:crypto";
import { rmdirSync, unlinkSync } from "node:fs";
import { mkdir, rename, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../core/errors.js";
import { LOCK_OWNER_FILE, LOCK_STALE_MS, lockIsStale, lockPath, removeLockDir } from "./siblings.js";

/**
 * Serialises work on one file, within this process and across processes. Inside the process, calls on
 * one path queue up (two sessions in one MCP server included). Across processes, an advisory lock beside
 * the file (`.<name>.cc-tools-lock`, a directory: mkdir is atomic on every local and network file system)
 * keeps two cc-tools processes from interleaving a read-modify-rename of the same file. Git never tracks an
 * empty directory, and the lock exists only while a write runs; the process removes it on exit.
 *
 * A lock left by a killed process is taken over at once when its owner file names a dead pid or is gone (a
 * release cut short), and in any case once untouched for LOCK_STALE_MS (the holder refreshes its mtime every LOCK_REFRESH_MS). A takeover
 * renames the lock away first, so two processes that both see it stale cannot both take it. Writers that do not take the lock (an editor, a script) are not
 * stopped by it; the re-check of the content around the rename (see tools/file/guard.ts) catches them.
 *
 * (proper-lockfile does the same, but installs signal handlers on import that keep a host from dying of
 * the signals it does not handle itself.)
 */

/** How often a held lock's mtime is refreshed. */
const LOCK_REFRESH_MS = 2_000;
/** Longest wait for another process's lock before a clear error. */
const LOCK_WAIT_MS = 30_000;
/** Pauses between attempts grow from the first to the longest. */
const LOCK_RETRY_FIRST_MS = 5;
const LOCK_RETRY_MAX_MS = 200;
/** Errors that mean no lock can be made beside this file; the write itself then reports what is wrong. */
const UNLOCKABLE = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM", "EROFS"]);

interface HeldLock {
  dir: string;
  /** The directory's inode: a lock taken over by another process is a new directory of the same name. */
  ino: number;
  refresh: NodeJS.Timeout;
  /** Why the lock was lost (its directory vanished or was taken over), if it was. */
  lost?: string;
}

const tails = new Map<string, Promise<unknown>>();
/** Cross-process locks this process holds, by the path of the file they guard. */
const held = new Map<string, HeldLock>();
let exitHandlerInstalled = false;

function removeHeldLocksNow(): void {
  for (const lock of held.values()) {
    try {
      unlinkSync(join(lock.dir, LOCK_OWNER_FILE));
      rmdirSync(lock.dir);
    } catch {
      // already gone
    }
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? "";
}

/** Takes a stale lock out of the way; only one of several processes that saw it stale succeeds. */
async function breakStale(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info || !(await lockIsStale(dir, info.mtimeMs))) return;
  const aside = `${dir}.${randomBytes(4).toString("hex")}.stale`;
  const movedAside = await rename(dir, aside).then(
    () => true,
    () => false,
  );
  if (movedAside) await removeLockDir(aside);
}

/** One attempt: the lock, or undefined when another process holds it. */
async function tryLock(path: string): Promise<HeldLock | undefined> {
  const dir = lockPath(path);
  // Made aside with its owner file, then renamed into place: a lock never exists without its owner,
  // and rename fails (ENOTEMPTY, EEXIST) while another process's lock is there.
  const fresh = `${dir}.${process.pid}-${randomBytes(4).toString("hex")}.new`;
  await mkdir(fresh);
  try {
    await writeFile(join(fresh, LOCK_OWNER_FILE), String(process.pid));
    await rename(fresh, dir);
  } catch (error) {
    await removeLockDir(fresh);
    if (!["ENOTEMPTY", "EEXIST"].includes(errorCode(error))) throw error;
    await breakStale(dir);
    return undefined;
  }
  const { ino } = await stat(dir);
  const lock: HeldLock = {
    dir,
    ino,
    refresh: setInterval(() => {
      const now = new Date();
      utimes(dir, now, now).catch((error) => {
        lock.lost = `its lock directory could not be refreshed: ${errorCode(error) || String(error)}`;
      });
    }, LOCK_REFRESH_MS),
  };
  lock.refresh.unref();
  return lock;
}

/** Takes the lock, waiting for another holder; undefined when no lock can be made beside the file. */
async function acquire(path: string): Promise<HeldLock | undefined> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = LOCK_RETRY_FIRST_MS; ; pause = Math.min(pause * 1.5, LOCK_RETRY_MAX_MS)) {
    let lock: HeldLock | undefined;
    try {
      lock = await tryLock(path);
    } catch (error) {
      if (UNLOCKABLE.has(errorCode(error))) return undefined;
      throw error;
    }
    if (lock) return lock;
    if (Date.now() >= deadline) {
      throw new InputError(
        `${path} is being written by another process (its lock ${lockPath(path)} is held), so nothing was written. ` +
          `Retry in a moment; a lock left by a killed process is taken over at once, or once ${LOCK_STALE_MS / 1000} s old.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
  }
}

/** Runs `work` holding `path`'s lock (absolute path of the file written, after symlinks). */
export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const locked = async () => {
    const lock = await acquire(path);
    if (lock) {
      held.set(path, lock);
      if (!exitHandlerInstalled) {
        exitHandlerInstalled = true;
        process.on("exit", removeHeldLocksNow);
      }
    }
    try {
      return await work();
    } finally {
      if (lock) {
        clearInterval(lock.refresh);
        held.delete(path);
        if (!lock.lost) await removeLockDir(lock.dir);
      }
    }
  };
  const previous = tails.get(path) ?? Promise.resolve();
  const run = previous.then(locked, locked);
  const tail = run.catch(() => undefined);
  tails.set(path, tail);
  try {
    return await run;
  } finally {
    if (tails.get(path) === tail) tails.delete(path);
  }
}

/**
 * Throws when this process held `path`'s lock and lost it (say the machine slept past LOCK_STALE_MS and
 * another process took it over): a write must not go ahead then.
 */
export async function assertLockHeld(path: string): Promise<void> {
  const lock = held.get(path);
  if (!lock) return;
  // Checked now, not only by the last refresh: the directory must still be there.
  const present = await stat(lock.dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!present) lock.lost ??= "its lock directory was removed";
  if (lock.lost) {
    throw new InputError(
      `The lock on ${path} was lost while writing (${lock.lost}), so nothing was written; retry.`,
    );
  }
}
