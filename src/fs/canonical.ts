import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, parse, relative, sep } from "node:path";

// The one answer to "which file does this path really name": used by permission checks and by writes
// alike, so a write can never land somewhere other than where its permission was judged.

/** Symlinks followed while canonicalising one path before giving up (Linux's SYMLOOP_MAX is 40). */
export const MAX_SYMLINK_HOPS = 40;

export { expandTilde } from "../core/paths.js";

/**
 * Where a path really leads: every existing component is resolved through symlinks (also dangling
 * ones, whose target may be created by a write), `..` is applied to the resolved parent (as the
 * kernel does), and components that do not exist yet are appended as written. So a symlink inside the
 * workspace that points outside is outside, and `..` cannot climb out unnoticed.
 */
/** Path separators: `\\` is one only on Windows; elsewhere it is an ordinary character of a file name. */
const SEPARATORS = process.platform === "win32" ? /[\\/]+/ : /\/+/;

export function canonicalPath(path: string, baseDir: string): string {
  const absolute = isAbsolute(path) ? path : `${baseDir}${sep}${path}`;
  // A path that exists whole resolves in one call, with the answer the walk (one realpath per component)
  // gives. Not a path with `..`: POSIX realpath applies it to the resolved parent, as the walk does, but
  // Windows removes it from the text first.
  if (!absolute.split(SEPARATORS).includes("..")) {
    try {
      return realpathSync.native(absolute);
    } catch {
      // a part does not exist (or cannot be searched): the walk says where it would be
    }
  }
  return walk(absolute, { hops: 0 });
}

function walk(absolute: string, budget: { hops: number }): string {
  const root = parse(absolute).root;
  let current = root;
  let exists = true;
  for (const part of absolute.slice(root.length).split(SEPARATORS)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = dirname(current);
      exists = true;
      continue;
    }
    const next = join(current, part);
    if (!exists) {
      current = next;
      continue;
    }
    try {
      current = realpathSync.native(next);
    } catch {
      current = followDangling(next, current, budget);
      exists = false;
    }
  }
  return current;
}

/** A path that does not resolve: when it is a symlink, a write would create its target, so follow it. */
function followDangling(path: string, parent: string, budget: { hops: number }): string {
  let target: string;
  try {
    if (!lstatSync(path).isSymbolicLink()) return path;
    target = readlinkSync(path);
  } catch {
    return path;
  }
  if (++budget.hops > MAX_SYMLINK_HOPS) return path;
  return walk(isAbsolute(target) ? target : `${parent}${sep}${target}`, budget);
}

/** True when `path` is `dir` or below it (both canonical). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || !escapes(rel);
}

/** True when a relative path leaves its base (`..`, `../x`) or is on another drive. */
export function escapes(rel: string): boolean {
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}
