import { randomBytes } from "node:crypto";
import { lstat, mkdir, open, readlink, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

/**
 * Writes a file so that a crash at any moment leaves either the old or the new content, never a mix:
 * the bytes go to a temp file in the same directory (same file system, so the rename is atomic), are
 * fsynced, and the temp file is renamed over the target. A symlink is followed, so its target changes
 * and the link stays a link; the existing file's permission bits are kept.
 */

/** Mode of a file the tools create; the process umask still applies. */
const NEW_FILE_MODE = 0o666;

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** The file a write to `path` lands in: the final target of a symlink chain, even a dangling one. */
export async function writeTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    const info = await lstat(current).catch(() => undefined);
    if (!info?.isSymbolicLink()) break;
    current = resolve(dirname(current), await readlink(current));
  }
  // A new file: canonicalise its directory, so the path matches what Read records once it exists.
  return realpath(dirname(current)).then(
    (dir) => join(dir, basename(current)),
    () => current,
  );
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename itself durable; some platforms cannot open directories, which is harmless.
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

export interface AtomicWriteOptions {
  /** Create missing parent directories (Write does; Edit only touches existing files). */
  createParents?: boolean;
  /**
   * CPU work to run while the disk flushes (hashing the new content): fsync waits on the device in
   * the thread pool, so the main thread is free meanwhile.
   */
  whileSyncing?: () => void;
}

/** Atomically replaces (or creates) `path` with `data`; returns the path actually written. */
export async function atomicWrite(
  path: string,
  data: Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<string> {
  const target = await writeTarget(path);
  const dir = dirname(target);
  if (options.createParents) await mkdir(dir, { recursive: true });
  const existingMode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dir, `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", existingMode ?? NEW_FILE_MODE);
  try {
    try {
      if (existingMode !== undefined) await handle.chmod(existingMode);
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
  return target;
}
