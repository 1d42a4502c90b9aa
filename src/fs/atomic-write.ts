import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { canonicalPath } from "./canonical.js";

/**
 * Writes a file so that a crash at any moment leaves either the old or the new content, never a mix:
 * the bytes go to a temp file in the same directory (same file system, so the rename is atomic), are
 * fsynced, and the temp file is renamed over the target. A symlink is followed, so its target changes
 * and the link stays a link; the existing file's permission bits are kept, and its owner where the
 * process may set it (as root). The rename replaces one name: other hard links to the file keep the old
 * content, which callers report.
 */

/** Mode of a file the tools create; the process umask still applies. */
const NEW_FILE_MODE = 0o666;
/** Random bytes in a temp file's name (hex-encoded, so twice as many characters). */
const TEMP_ID_BYTES = 6;
/**
 * Age after which a temp file of ours is taken for the leftover of a killed writer and removed. Far
 * longer than any write takes, so a write in progress in another process is never disturbed.
 */
const STALE_TEMP_MS = 10 * 60 * 1000;

/**
 * The file a write to `path` (absolute) lands in: the final target of a symlink chain, even a dangling one,
 * resolved exactly as the permission check resolves it (`..` after a link applies to the link's target, as
 * the kernel does), so a write never lands anywhere its permission was not judged.
 */
export async function writeTarget(path: string): Promise<string> {
  return canonicalPath(path, "/");
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename itself durable; some platforms cannot open directories, which is harmless.
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

const tempName = (target: string) => `.${basename(target)}.${randomBytes(TEMP_ID_BYTES).toString("hex")}.tmp`;

function isTempOf(name: string, target: string): boolean {
  const prefix = `.${basename(target)}.`;
  const id = name.slice(prefix.length, -".tmp".length);
  return (
    name.startsWith(prefix) &&
    name.endsWith(".tmp") &&
    id.length === 2 * TEMP_ID_BYTES &&
    /^[0-9a-f]+$/.test(id)
  );
}

/** Removes temp files a killed writer of `target` left behind; best effort, errors ignored. */
async function removeStaleTemps(dir: string, target: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    if (!isTempOf(name, target)) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile() && now - info.mtimeMs > STALE_TEMP_MS) await unlink(path).catch(() => undefined);
  }
}

export interface AtomicWriteOptions {
  /** Create missing parent directories (Write does; Edit only touches existing files). */
  createParents?: boolean;
  /**
   * CPU work to run while the disk flushes (hashing the new content): fsync waits on the device in
   * the thread pool, so the main thread is free meanwhile.
   */
  whileSyncing?: () => void;
  /** Permission bits of a file that does not exist yet (an existing file keeps its own). */
  mode?: number;
}

export interface AtomicWriteResult {
  /** The path actually written (a symlink's target). */
  target: string;
  /** Other hard links the file had: they still hold the old content. */
  separatedLinks: number;
}

/** Atomically replaces (or creates) `path` with `data`. */
export async function atomicWrite(
  path: string,
  data: Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<AtomicWriteResult> {
  const target = await writeTarget(path);
  const dir = dirname(target);
  if (options.createParents) await mkdir(dir, { recursive: true });
  const existing = await stat(target).catch(() => undefined);
  const existingMode = existing && existing.mode & 0o7777;
  const temp = join(dir, tempName(target));
  const handle = await open(temp, "wx", existingMode ?? options.mode ?? NEW_FILE_MODE);
  try {
    try {
      if (existing) {
        // Only root may give a file away; for anyone else the new file is theirs, as with any editor.
        await handle.chown(existing.uid, existing.gid).catch(() => undefined);
        await handle.chmod(existingMode!);
      }
      await handle.writeFile(data);
      const syncing = handle.sync();
      options.whileSyncing?.();
      await syncing;
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
  await removeStaleTemps(dir, target);
  return { target, separatedLinks: existing ? existing.nlink - 1 : 0 };
}
