import { readdir, stat } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { similarity } from "../core/similarity.js";

/** Most names offered as "did you mean". */
const MAX_SUGGESTIONS = 3;
/** Least similarity for a name to be offered as "did you mean". */
const MIN_SIMILARITY = 0.5;

/** Names in the file's directory close to its name (same stem, other case, a typo). */
async function closeNames(path: string): Promise<string[]> {
  const entries = await readdir(dirname(path)).catch(() => [] as string[]);
  const name = basename(path).toLowerCase();
  const stemOf = (n: string) => n.slice(0, n.length - extname(n).length).toLowerCase();
  const stem = stemOf(name);
  // Stems are compared, not whole names: a shared ".ts" says nothing about which file was meant.
  const score = (entry: string) =>
    entry.toLowerCase() === name || stemOf(entry) === stem ? 2 : similarity(stemOf(entry), stem);
  return entries
    .map((entry) => ({ entry, score: score(entry) }))
    .filter((c) => c.score >= MIN_SIMILARITY)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_SUGGESTIONS)
    .map((c) => c.entry);
}

async function nearestExistingDir(path: string): Promise<string> {
  let dir = dirname(path);
  while (
    dirname(dir) !== dir &&
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    dir = dirname(dir);
  return dir;
}

/** The message for a path that does not exist: where we looked, and the closest names there. */
export async function missingFileMessage(path: string, workingDir: string): Promise<string> {
  const lines = [`File does not exist: ${path} (working directory: ${workingDir}).`];
  const dirExists = await stat(dirname(path)).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!dirExists) {
    const existing = await nearestExistingDir(path);
    lines.push(`Its directory does not exist either; the nearest existing ancestor is ${existing}.`);
  }
  const names = dirExists ? await closeNames(path) : [];
  if (names.length > 0) {
    lines.push(`Did you mean ${names.map((n) => join(dirname(path), n)).join(", ")}?`);
  } else {
    lines.push("Use Glob to find the file by name.");
  }
  return lines.join(" ");
}
