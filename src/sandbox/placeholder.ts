import { closeSync, mkdirSync, openSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../core/pid.js";
import { onHostExit } from "../process/groups.js";

/**
 * A placeholder is an empty directory standing in for a control file that does not exist while a
 * sandboxed command runs. Each process using one leaves a marker in it, so one process never removes a
 * placeholder another process's sandbox still relies on (removing a mount point's directory detaches
 * the mount in every other namespace, and the command there could then create the control file).
 */
const MARKER = /^\.cc-tools-sandbox-(\d+)$/;

const markerOf = (dir: string, pid = process.pid) => join(dir, `.cc-tools-sandbox-${pid}`);

/**
 * True for a directory that holds nothing but placeholder markers: an empty one included, unless
 * `markerRequired` (where a real, empty directory may stand, such as `.claude`, only a directory with a
 * marker, of a live process or a killed one, is a placeholder).
 */
export function isPlaceholder(path: string, markerRequired = false): boolean {
  try {
    const names = readdirSync(path);
    return names.every((name) => MARKER.test(name)) && (!markerRequired || names.length > 0);
  } catch {
    return false;
  }
}

/** Uses of each placeholder in this process: a background command may outlive the foreground one. */
const users = new Map<string, number>();

/**
 * Placeholders no command of this process uses any more. By default each is removed as its last use ends.
 * A host that sends a call's result before its next turn (the MCP server) may defer the removal (a
 * readdir, an unlink and an rmdir each, 1-2 ms apiece on ext4) to that turn, off the result's path; the
 * next sandboxed command removes them before it looks at the file system (a placeholder would read as a
 * real .git), as if they had not waited, and nothing is kept for reuse. A library caller gets the workspace
 * back as it was when the call returns.
 */
const idle = new Set<string>();
let deferRelease = false;
let releaseScheduled = false;
let exitWorkRegistered = false;

/** Makes this process remove placeholders on the event loop's turn after their last use (see `idle`). */
export function deferPlaceholderRelease(): void {
  deferRelease = true;
}

/** Removes every idle placeholder now. */
export function releaseIdlePlaceholders(): void {
  for (const path of idle) release(path);
  idle.clear();
}

/**
 * At host exit (after its commands were killed): every placeholder this process still has, held by a
 * command that was running or waiting for removal, goes; another process's stays (its marker holds it).
 */
function releaseAllPlaceholders(): void {
  for (const path of users.keys()) release(path);
  users.clear();
  releaseIdlePlaceholders();
}

function releaseLater(path: string): void {
  if (!deferRelease) {
    release(path);
    return;
  }
  idle.add(path);
  if (releaseScheduled) return;
  releaseScheduled = true;
  setImmediate(() => {
    releaseScheduled = false;
    releaseIdlePlaceholders();
  });
}

/**
 * Creates (or joins) the placeholders; the returned function lets go of them. The last use's placeholder
 * is removed then (in a host that defers, on the event loop's next turn unless this process holds it again
 * before), and at the latest when the host exits.
 */
export function holdPlaceholders(paths: readonly string[]): () => void {
  if (!exitWorkRegistered && paths.length > 0) {
    exitWorkRegistered = true;
    onHostExit(releaseAllPlaceholders);
  }
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
      if (pid === process.pid || (pid > 0 && !processAlive(pid))) unlinkQuietly(join(path, name));
    }
    rmdirSync(path);
  } catch {
    // another process still holds it, or it is gone
  }
}
