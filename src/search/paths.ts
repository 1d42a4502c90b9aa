import { isAbsolute, relative, sep } from "node:path";

/** A path as results show it: relative to the working dir when under it (as Claude Code does), else absolute. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = relative(cwd, absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute;
  return rel;
}

/** What a search prints before each path below the directory `root`: its display path and a separator ("" for cwd). */
export function displayPrefix(cwd: string, root: string): string {
  const shown = displayPath(cwd, root);
  return shown === "." ? "" : shown.endsWith(sep) ? shown : shown + sep;
}
