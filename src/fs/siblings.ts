import { randomBytes } from "node:crypto";
import { lstat, readdir, readFile, rmdir, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { processAlive } from "../core/pid.js";

/**
 * The files a write creates beside the file it writes: a temp file (renamed over the target) and a lock
 * directory (file-lock.ts). Their names stay within the 255 bytes a name may have, so any legal name can be
 * written, and they carry what a later write needs to tell a leftover from work in progress: the temp
 * file its writer's pid in its name, the lock an owner file with the pid and its mtime (refreshed while held). Every write sweeps its directory of
 * leftovers of killed writers, whatever file they were for.
 */

/** Random bytes in a temp file's name (hex-encoded, so twice as many characters). */
const TEMP_ID_BYTES = 6;
/** Most bytes of the target's name a sibling's name repeats, so `.<name>.<suffix>` fits in NAME_MAX. */
const NAME_STEM_MAX_BYTES = 200;
/**
 * Age after which a temp file of a live (or unknown) process is taken for a leftover and removed. Far
 * longer than any write takes, so a write in progress in another process is never disturbed; a temp file
 * whose writer's pid is dead goes at once.
 */
const STALE_TEMP_MS = 10 * 60 * 1000;
/** A lock whose mtime is older than this is taken for the leftover of a killed process. */
export const LOCK_STALE_MS = 10_000;
/** The file in a lock directory that names the process holding it. */
export const LOCK_OWNER_FILE = "owner";

const TEMP_PATTERN = new RegExp(`^\\..*\\.cc-tools-(\\d+)-[0-9a-f]{${2 * TEMP_ID_BYTES}}\\.tmp$`);
const LOCK_SUFFIX = "cc-tools-lock";
/** A lock being made, named by its maker's pid, and one a takeover moved aside (file-lock.ts). */
const LOCK_NEW_PATTERN = /\.cc-tools-lock\.(\d+)-[0-9a-f]{8}\.new$/;
const LOCK_ASIDE_PATTERN = /\.cc-tools-lock\.[0-9a-f]{8}\.stale$/;

/**
 * `.<name>.<suffix>` for a file beside `target`, with the name cut (at a character boundary) so the result
 * stays within the 255 bytes a file name may have.
 */
function hiddenSibling(target: string, suffix: string): string {
  const name = Buffer.from(basename(target));
  let cut = Math.min(name.length, NAME_STEM_MAX_BYTES);
  // Never split a UTF-8 sequence: back off continuation bytes (10xxxxxx).
  while (cut < name.length && (name[cut]! & 0xc0) === 0x80) cut--;
  return `.${name.subarray(0, cut).toString()}.${suffix}`;
}

/** A fresh temp file name for a write of `target`: `.<name>.cc-tools-<pid>-<hex>.tmp`. */
export function tempName(target: string): string {
  return hiddenSibling(target, `cc-tools-${process.pid}-${randomBytes(TEMP_ID_BYTES).toString("hex")}.tmp`);
}

/** The lock directory of `target`: `.<name>.cc-tools-lock` beside it. */
export function lockPath(target: string): string {
  return join(dirname(target), hiddenSibling(target, LOCK_SUFFIX));
}

/**
 * True when the lock directory `dir` is a leftover: it has no owner file, its owner's pid is dead, or (a
 * pid can be reused) it has not been refreshed for LOCK_STALE_MS. A lock is renamed into place with its
 * owner file and loses it only while being released, so one without it is a release that a kill cut
 * short (between the unlink and the rmdir) or one finishing now: taking it over is safe either way.
 */
export async function lockIsStale(dir: string, mtimeMs: number): Promise<boolean> {
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return true;
  let owner: string;
  try {
    owner = await readFile(join(dir, LOCK_OWNER_FILE), "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
  const pid = Number(owner);
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid);
}

/** Removes a lock directory and its owner file; false when it was not there or not a lock. */
export async function removeLockDir(dir: string): Promise<boolean> {
  await unlink(join(dir, LOCK_OWNER_FILE)).catch(() => {});
  return rmdir(dir).then(
    () => true,
    () => false,
  );
}

/**
 * Removes what killed writers left in `dir`: temp files whose writer's pid is gone or that are older than
 * STALE_TEMP_MS (a pid can be reused), and lock directories not refreshed for LOCK_STALE_MS. Best effort.
 */
export async function sweepLeftovers(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    const temp = TEMP_PATTERN.exec(name);
    const making = LOCK_NEW_PATTERN.exec(name);
    const aside = LOCK_ASIDE_PATTERN.test(name);
    const lock = name.startsWith(".") && name.endsWith(`.${LOCK_SUFFIX}`);
    if (!temp && !making && !aside && !lock) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info) continue;
    const age = now - info.mtimeMs;
    if (temp && info.isFile()) {
      const pid = Number(temp[1]);
      if (pid !== process.pid && (!processAlive(pid) || age > STALE_TEMP_MS))
        await unlink(path).catch(() => {});
    } else if (!info.isDirectory()) {
      // Not ours: every lock, made or moved aside, is a directory.
    } else if (making) {
      const pid = Number(making[1]);
      if (pid !== process.pid && (!processAlive(pid) || age > LOCK_STALE_MS)) await removeLockDir(path);
    } else if (aside || (lock && (await lockIsStale(path, info.mtimeMs)))) {
      // Not rm -r: a lock holds only its owner file, so anything else of that name is left alone.
      await removeLockDir(path);
    }
  }
}
