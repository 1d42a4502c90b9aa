import { homedir, tmpdir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { canonicalPath, isWithin } from "../fs/canonical.js";

/**
 * Places a sandboxed command can write: the workspace, additional directories and allowWrite of every
 * session with the sandbox on, the sandbox's package cache, and the writable places (temp dirs) of every
 * policy built. This process runs some programs outside the sandbox (the waiting bash, bubblewrap itself,
 * the stand-in helper's perl, ripgrep, cp for attributes, git and the programs git starts, MCP servers named
 * by a bare command, the shell of a hook or of a command the user let out). None of them may come from such
 * a place: a command could have put a program of that name there, in this session or an earlier one, and a
 * host whose PATH holds `node_modules/.bin` (npx, npm run) would then run it with the user's rights.
 *
 * A place that holds the home directory (a workspace of `/` or `~`) is not counted: a sandbox that may write
 * there has no boundary for this to keep (it can edit the shell's startup files), and leaving out every
 * program below it would leave out most of a user's toolchain (nvm's node, cargo's binaries).
 */
const writable = new Set<string>();

/** The sandbox's package cache (see policy.ts), known before any command builds a policy. */
export const SANDBOX_CACHE_DIRS = [
  join(homedir(), ".cache", "cc-tools", "sandbox"),
  join(tmpdir(), "cc-tools-sandbox-cache"),
];

/** Remembers places a sandboxed command can write (see `writable`). */
export function noteSandboxWritable(paths: Iterable<string>): void {
  const home = homedir();
  for (const path of paths) {
    for (const place of new Set([path, resolved(path)])) {
      if (!isAbsolute(place) || isWithin(home, place)) continue;
      writable.add(place);
    }
  }
}

/** True when a sandboxed command could have written `path` (or a directory on the way to it). */
export function sandboxCouldWrite(path: string): boolean {
  if (writable.size === 0) return false;
  const real = resolved(path);
  for (const root of writable) if (isWithin(path, root) || isWithin(real, root)) return true;
  return false;
}

/**
 * `pathEnv` without the directories a sandboxed command could have written a program into, and without
 * relative or empty entries (which name a place by the current directory, often the workspace): the PATH
 * to look up a program this process runs outside the sandbox, and the PATH such a program (git) gets to
 * look up its own.
 */
export function hostSearchPath(pathEnv: string = process.env.PATH ?? ""): string {
  return pathEnv
    .split(delimiter)
    .filter((dir) => isAbsolute(dir) && !sandboxCouldWrite(dir))
    .join(delimiter);
}

/** Where `path` really leads (fs/canonical.ts): symlinks resolved, also in a part that does not exist yet. */
const resolved = (path: string) => (isAbsolute(path) ? canonicalPath(path, "/") : path);

/** `env` with the PATH of hostSearchPath: for a program this process runs outside the sandbox that starts others. */
export function hostEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, PATH: hostSearchPath(env.PATH) };
}
