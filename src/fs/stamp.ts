import type { BigIntStats } from "node:fs";
import { type FileHandle, stat, statfs } from "node:fs/promises";

/**
 * A file's stamp: which file it is (device and inode) and the kernel's record of its last change (size,
 * mtime, ctime). Comparing the bytes proves a file unchanged; an unchanged stamp proves it too, for the
 * price of an fstat instead of reading the file again (the bench's 12.5 MB file, compared before and
 * after the rename: 14 ms of an Edit's 50), once the stamp is settled:
 *
 * - Every write to a file sets its mtime and ctime to the kernel's clock, and only the clock sets ctime
 *   (utimes sets mtime to anything, and ctime to the clock).
 * - That clock is read coarsely: it advances a tick at a time (at most 10 ms on Linux, whose HZ is 100 or
 *   more). A write in the same tick as the file's last change can leave its stamp as it was, so a stamp
 *   whose ctime is that recent proves nothing ("racy", as git calls it).
 * - A stamp taken at T whose ctime is SETTLED_STAMP_MS or more before T is settled: any later write gets a
 *   ctime of at least T minus a tick, after the stamp's, so the stamp changes. (Recent kernels'
 *   multigrain timestamps go further: a change after the ctime was read gets a fine-grained time.)
 * - This holds only where the kernel's own clock stamps the file in nanoseconds: local file systems that
 *   keep nanosecond times (LOCAL_FINE_TIMES). A network file system's times come from the server's clock;
 *   virtiofs's from the host's; FAT keeps 2 s. Times that are whole seconds (an ext4 made with 128-byte
 *   inodes) are never settled either.
 *
 * Not seen by a stamp: a program writing through a shared writable mapping of the file, whose later writes
 * to a page already written through that mapping do not touch the times. Text files are not changed that
 * way; where a stamp is not settled, callers compare the bytes.
 */
export interface FileStamp {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** How long before a stamp is taken the file's last change must be for the stamp to be settled: two ticks at the slowest clock. */
export const SETTLED_STAMP_MS = 20;

/**
 * statfs f_type of the Linux file systems whose file times come from this kernel's clock in nanoseconds
 * (linux/magic.h): ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, and overlayfs (a container's root), whose
 * files are those of a local upper or lower file system.
 */
const LOCAL_FINE_TIMES = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1, 0x794c7630,
]);

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
/** The wall clock as this module found it: a test's fake timers, installed later, do not move it. */
const wallClockMs = Date.now.bind(Date);

/**
 * The settled stamp of the file open as `handle` (at `path`), taken now; undefined when it would prove
 * nothing (the file changed less than SETTLED_STAMP_MS ago, its times are whole seconds, its file system
 * is not one that keeps LOCAL_FINE_TIMES, or this is not Linux).
 */
export async function settledStamp(handle: FileHandle, path: string): Promise<FileStamp | undefined> {
  if (process.platform !== "linux") return undefined;
  // Read before the fstat: a change between the two is in the stamp, and makes it recent.
  const takenAt = BigInt(wallClockMs()) * NS_PER_MS;
  const info = await handle.stat({ bigint: true });
  if (info.ctimeNs > takenAt - BigInt(SETTLED_STAMP_MS) * NS_PER_MS) return undefined;
  if (info.ctimeNs % NS_PER_S === 0n && info.mtimeNs % NS_PER_S === 0n) return undefined;
  if (!(await keepsFineTimes(info.dev, path))) return undefined;
  return stampOf(info);
}

/** The stamp of `info`, settled or not. */
export function stampOf(info: BigIntStats): FileStamp {
  const { dev, ino, size, mtimeNs, ctimeNs } = info;
  return { dev, ino, size, mtimeNs, ctimeNs };
}

/** True when both stamps are of the same file, unchanged. */
export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/**
 * Whether device `dev`, which holds `path`, is a file system that keeps LOCAL_FINE_TIMES. Asked of the
 * path (Node has no fstatfs), which must still be on that device. Not remembered: a device number can
 * come back for another file system once the first is unmounted.
 */
async function keepsFineTimes(dev: bigint, path: string): Promise<boolean> {
  try {
    const [fs, again] = await Promise.all([statfs(path), stat(path, { bigint: true })]);
    return again.dev === dev && LOCAL_FINE_TIMES.has(fs.type);
  } catch {
    return false;
  }
}
