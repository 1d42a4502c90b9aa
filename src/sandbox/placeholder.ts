import { closeSync, mkdirSync, openSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * A placeholder is an empty directory standing in for a control file that does not exist while a
 * sandboxed command runs. Each process using one leaves a marker in it, so one process never removes a
 * placeholder another process's sandbox still relies on (removing a mount point's directory detaches
 * the mount in every other namespace, and the command there could then create the control file).
 */
const MARKER = /^\.cc-tools-sandbox-(\d+)$/;

const markerOf = (dir: string, pid = process.pid) => join(dir, `.cc-tools-sandbox-${pid}`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True for a directory that holds nothing but placeholder markers (an empty one included). */
export function isPlaceholder(path: string): boolean {
  try {
    return readdirSync(path).every((name) => MARKER.test(name));
  } catch {
    return false;
  }
}

/** Uses of each placeholder in this process: a background command may outlive the foreground one. */
const users = new Map<string, number>();

/**
 * Placeholders no command of this process uses any more, whose removal (a readdir, an unlink and an
 * rmdir each, 1-2 ms apiece on ext4) waits for the event loop's next turn: the command's result is on its
 * way by then. The next sandboxed command removes them before it looks at the file system (a placeholder
 * would read as a real .git), as if they had not waited: nothing is kept for reuse. The process's exit
 * removes what is still waiting.
 */
const idle = new Set<string>();
let releaseScheduled = false;
let exitHandlerInstalled = false;

/** Removes every idle placeholder now. */
export function releaseIdlePlaceholders(): void {
  for (const path of idle) release(path);
  idle.clear();
}

function releaseLater(path: string): void {
  idle.add(path);
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on("exit", releaseIdlePlaceholders);
  }
  if (releaseScheduled) return;
  releaseScheduled = true;
  setImmediate(() => {
    releaseScheduled = false;
    releaseIdlePlaceholders();
  });
}

/**
 * Creates (or joins) the placeholders; the returned function lets go of them. The last use's placeholder
 * is removed on the event loop's next turn (or at exit), unless this process holds it again before.
 */
export function holdPlaceholders(paths: readonly string[]): () => void {
  for (const path of paths) {
    const count = users.get(path) ?? 0;
    if (count === 0) {
      if (idle.delete(path)) release(path);
      mkdirSync(path, { recursive: true });
      closeSync(openSync(markerOf(path), "w"));
    }
    users.set(path, count + 1);
  }
  return () => {
    for (const path of paths) {
      const count = (users.get(path) ?? 1) - 1;
      if (count > 0) {
        users.set(path, count);
        continue;
      }
      users.delete(path);
      releaseLater(path);
    }
  };
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

/** Removes this process's marker and those of dead processes, then the directory if nothing else holds it. */
function release(path: string): void {
  try {
    for (const name of readdirSync(path)) {
      const pid = Number(MARKER.exec(name)?.[1]);
      if (pid === process.pid || (pid > 0 && !alive(pid))) unlinkQuietly(join(path, name));
    }
    rmdirSync(path);
  } catch {
    // another process still holds it, or it is gone
  }
}
