import { realpathSync } from "node:fs";
import { delimiter, isAbsolute } from "node:path";
import { isWithin } from "../fs/canonical.js";

/**
 * Places a sandboxed command can write: the workspace and additional directories of every session with the
 * sandbox on, and the writable places (temp dir, package caches, allowWrite) of every sandbox policy built.
 * This process runs some programs outside the sandbox (the waiting bash, bubblewrap itself, the stand-in
 * helper's perl, cp for attributes, git for worktrees, the shell of a command the user let out). None of
 * them may come from such a place: a command could have put a program of that name there, in this session
 * or an earlier one, and a host whose PATH holds `node_modules/.bin` (npx, npm run) would then run it with
 * the user's rights.
 */
const writable = new Set<string>();

/** Remembers places a sandboxed command can write (see `writable`). */
export function noteSandboxWritable(paths: Iterable<string>): void {
  for (const path of paths) {
    writable.add(path);
    try {
      writable.add(realpathSync.native(path));
    } catch {
      // not there (yet): the literal path is enough
    }
  }
}

/**
 * `pathEnv` without the directories a sandboxed command could have written a program into, and without
 * relative entries (which name a place by the current directory, often the workspace): the PATH to look up
 * a program this process runs outside the sandbox. The program's own environment keeps the full PATH.
 */
export function hostSearchPath(pathEnv: string = process.env.PATH ?? ""): string {
  if (writable.size === 0) return pathEnv;
  return pathEnv
    .split(delimiter)
    .filter((dir) => isAbsolute(dir) && !insideWritable(dir))
    .join(delimiter);
}

function insideWritable(dir: string): boolean {
  let real = dir;
  try {
    real = realpathSync.native(dir);
  } catch {
    // missing: judged by its name
  }
  for (const root of writable) if (isWithin(dir, root) || isWithin(real, root)) return true;
  return false;
}
