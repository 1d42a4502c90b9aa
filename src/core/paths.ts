import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** `~` and `~/…` against `homeDir`; anything else as it is. */
export function expandTilde(path: string, homeDir: string): string {
  if (path === "~") return homeDir;
  if (path.startsWith("~/")) return join(homeDir, path.slice(2));
  return path;
}

/** A user- or model-supplied path made absolute: `~` expanded, relative paths against `base`. */
export function resolveAgainst(path: string, base: string, homeDir: string = homedir()): string {
  const expanded = expandTilde(path, homeDir);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(base, expanded);
}
