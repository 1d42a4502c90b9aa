import { execFile } from "node:child_process";
import { type FileHandle, link, lstat, mkdir, open, rename, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { log } from "../core/log.js";
import { hostProgram } from "../process/shells.js";
import { copyThroughHelper } from "./attribute-helper.js";
import { canonicalPath } from "./canonical.js";
import { sweepLeftovers, tempName } from "./siblings.js";

/**
 * Writes a file so that a crash at any moment leaves either the old or the new content, never a mix:
 * the bytes go to a temp file in the same directory (same file system, so the rename is atomic), are
 * fsynced, and the temp file is renamed over the target. A symlink is followed, so its target changes
 * and the link stays a link; the existing file's permission bits are kept, its extended attributes and
 * ACLs where the platform allows, and its owner where the process may set it (as root). The rename replaces one name: other hard links to the file keep the old
 * content, which callers report.
 */

/** Mode of a file the tools create; the process umask still applies. */
const NEW_FILE_MODE = 0o666;
export interface AtomicWriteOptions {
  /** Create missing parent directories (Write does; Edit only touches existing files). */
  createParents?: boolean;
  /**
   * Last check before the new content replaces the old (the temp file is written and synced): throwing
   * abandons the write, leaving the target as it is. Callers re-check that nobody changed the file.
   */
  beforeRename?: () => Promise<void>;
  /**
   * Work the caller still has to do before the rename (its last checks, its result): run while the new
   * content syncs to disk, which waits on the device, not on this thread. Throwing (or rejecting) abandons
   * the write, as beforeRename does.
   */
  whileSyncing?: () => void | Promise<void>;
  /** Runs right after the rename (before the directory sync); what it throws is the write's error. */
  afterRename?: () => Promise<void>;
  /**
   * The file must not exist: it is created with link(), which fails with EEXIST if the name appeared since
   * the caller looked, instead of rename(), which would replace whatever appeared.
   */
  createOnly?: boolean;
  /** Permission bits of a file that does not exist yet (an existing file keeps its own). */
  mode?: number;
}

export interface AtomicWriteResult {
  /** The path actually written (a symlink's target). */
  target: string;
  /** Other hard links the file had: they still hold the old content. */
  separatedLinks: number;
}

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

const execFileAsync = promisify(execFile);

/**
 * Carries the extended attributes (user.*, security labels) and ACLs of `from` over to `to`, where the
 * platform allows: Node has no xattr API, so GNU cp copies them (attributes only, not data). Best effort:
 * a file system without xattrs, or no GNU cp, leaves `to` with its mode and owner only.
 */
async function copyAttributes(from: string, to: string): Promise<void> {
  if (process.platform !== "linux") return;
  const status = await copyThroughHelper(from, to);
  if (status !== undefined) {
    if (status !== 0) log.debug(`could not carry extended attributes of ${from} over (cp exited ${status})`);
    return;
  }
  const cp = hostProgram("cp");
  if (!cp) {
    log.debug(`could not carry extended attributes of ${from} over: no cp outside the sandbox's reach`);
    return;
  }
  try {
    // Inside the try: a spawn can also throw at once (E2BIG), and attributes are carried on a best effort.
    await execFileAsync(cp, ["--attributes-only", "--preserve=mode,xattr", "--", from, to]);
  } catch (error) {
    log.debug(`could not carry extended attributes of ${from} over`, error);
  }
}

/** Errors of link() that mean the file system has no hard links, so rename() must do. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK", "ENOSYS"]);

/** Gives `temp` the name `target` only if `target` does not exist (EEXIST otherwise). */
async function createFrom(temp: string, target: string): Promise<void> {
  try {
    await link(temp, target);
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
    // Without hard links the check and the rename are two steps; the window between them is tiny.
    if (
      await lstat(target).then(
        () => true,
        () => false,
      )
    ) {
      throw Object.assign(new Error(`${target} exists`), { code: "EEXIST" });
    }
    await rename(temp, target);
    return;
  }
  await unlink(temp);
}

/**
 * Writes `pieces` in order at the handle's position, in one writev (FileHandle.writeFile would take a
 * trip to the threadpool per piece and per 512 KiB, with this thread between each; libuv splits a long
 * list of pieces itself). libuv reports a write cut short by an error (a full disk) as the bytes it got
 * through: the rest is written again, so that the error itself is what throws.
 */
async function writeAll(handle: FileHandle, pieces: readonly Uint8Array[]): Promise<void> {
  let rest = pieces.filter((piece) => piece.length > 0);
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest);
    if (bytesWritten <= 0) throw new Error("the file system took none of the bytes written");
    let done = 0;
    while (done < rest.length && bytesWritten >= rest[done]!.length) bytesWritten -= rest[done++]!.length;
    rest = rest.slice(done);
    if (bytesWritten > 0) rest[0] = rest[0]!.subarray(bytesWritten);
  }
}

/**
 * Atomically replaces (or creates) `path` with `data`: one buffer, or pieces written one after the other
 * (an edit's unchanged head and tail are views of the old content, never copied into one new buffer).
 */
export async function atomicWrite(
  path: string,
  data: Uint8Array | readonly Uint8Array[],
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
      await writeAll(handle, data instanceof Uint8Array ? [data] : data);
      const syncing = handle.sync();
      const attributes = existing ? copyAttributes(target, temp) : undefined;
      // Awaited below, after the caller's work, which may take turns of the event loop: a failure
      // meanwhile must not count as unhandled (it is what this write throws).
      syncing.catch(() => undefined);
      attributes?.catch(() => undefined);
      try {
        await options.whileSyncing?.();
      } finally {
        // Settled before the temp file is closed and, if the work threw, removed.
        await syncing;
        await attributes;
      }
    } finally {
      await handle.close();
    }
    await options.beforeRename?.();
    if (options.createOnly) await createFrom(temp, target);
    else await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  // The rename is made durable while the caller checks what it replaced.
  await Promise.all([options.afterRename?.(), syncDirectory(dir)]);
  await sweepLeftovers(dir);
  return { target, separatedLinks: existing ? existing.nlink - 1 : 0 };
}
