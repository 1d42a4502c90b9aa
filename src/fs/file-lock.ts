import lockfile from "proper-lockfile";
import { InputError } from "../core/errors.js";
import { LOCK_STALE_MS, lockPath } from "./siblings.js";

/**
 * Serialises work on one file, within this process and across processes. Inside the process, calls on
 * one path queue up (two sessions in one MCP server included). Across processes, an advisory lock beside
 * the file (`.<name>.cc-tools-lock`, a directory made with mkdir, which is atomic, via proper-lockfile)
 * keeps two cc-tools processes from interleaving a read-modify-rename of the same file. Git never tracks an
 * empty directory, and the lock exists only while a write runs.
 *
 * A lock left by a killed process goes stale: the holder refreshes its mtime every LOCK_UPDATE_MS, and a
 * lock untouched for LOCK_STALE_MS is taken over. Writers that do not take the lock (an editor, a script)
 * are not stopped by it; the re-check of the content just before the rename (see guard.ts) catches them.
 */

/** How often a held lock's mtime is refreshed (at most half of LOCK_STALE_MS). */
const LOCK_UPDATE_MS = 2_000;
/** Longest wait for another process's lock before a clear error. */
const LOCK_WAIT_MS = 30_000;
/** Pauses between attempts grow from the first to the longest. */
const LOCK_RETRY_FIRST_MS = 5;
const LOCK_RETRY_MAX_MS = 200;
/** Errors that mean no lock can be made beside this file; the write itself then reports what is wrong. */
const UNLOCKABLE = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM", "EROFS"]);

const tails = new Map<string, Promise<unknown>>();
/** Files whose cross-process lock this process holds, with why it was lost, if it was. */
const held = new Map<string, { lost?: Error }>();

/** One attempt; ELOCKED when another process holds a fresh lock. */
function tryLock(path: string, state: { lost?: Error }): Promise<() => Promise<void>> {
  return lockfile.lock(path, {
    realpath: false,
    lockfilePath: lockPath(path),
    stale: LOCK_STALE_MS,
    update: LOCK_UPDATE_MS,
    retries: 0,
    // Without this the library throws from a timer; the write checks `lost` before its rename instead.
    onCompromised: (error) => {
      state.lost = error;
    },
  });
}

/** Takes the lock, waiting for another holder; undefined when no lock can be made beside the file. */
async function acquire(path: string): Promise<(() => Promise<void>) | undefined> {
  const state: { lost?: Error } = {};
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = LOCK_RETRY_FIRST_MS; ; pause = Math.min(pause * 1.5, LOCK_RETRY_MAX_MS)) {
    try {
      const release = await tryLock(path, state);
      held.set(path, state);
      return async () => {
        held.delete(path);
        if (!state.lost) await release().catch(() => undefined);
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (UNLOCKABLE.has(code)) return undefined;
      if (code !== "ELOCKED") throw error;
      if (Date.now() >= deadline) {
        throw new InputError(
          `${path} is being written by another process (its lock ${lockPath(path)} is held), so nothing was written. ` +
            `Retry in a moment; a lock left by a killed process is taken over once ${LOCK_STALE_MS / 1000} s old.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }
}

/** Runs `work` holding `path`'s lock (absolute path of the file written, after symlinks). */
export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const locked = async () => {
    const release = await acquire(path);
    try {
      return await work();
    } finally {
      await release?.();
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
 * Throws when this process held `path`'s lock and lost it (its refresh failed past LOCK_STALE_MS, say after
 * the machine slept, and another process may have taken it over): a write must not go ahead then.
 */
export function assertLockHeld(path: string): void {
  const lost = held.get(path)?.lost;
  if (lost) {
    throw new InputError(
      `The lock on ${path} was lost while writing (${lost.message}), so nothing was written; retry.`,
    );
  }
}
