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

/**
 * The nearest existing directory above `path`, and the file in the way when one of `path`'s ancestors is a
 * file (nothing can exist below it; at most one ancestor can be one).
 */
export async function nearestExisting(path: string): Promise<{ dir: string; fileInTheWay?: string }> {
  let dir = dirname(path);
  let fileInTheWay: string | undefined;
  while (dirname(dir) !== dir) {
    const info = await stat(dir).catch(() => undefined);
    if (info?.isDirectory()) break;
    if (info) fileInTheWay = dir;
    dir = dirname(dir);
  }
  return { dir, fileInTheWay };
}

/** A note for names that differ from `path`'s only in the Unicode form of accented letters. */
function sameNameNote(path: string, names: string[]): string {
  const wanted = basename(path).normalize("NFC");
  return names.some((n) => n.normalize("NFC") === wanted)
    ? " (it looks the same, but spells an accented letter in the other Unicode form, composed vs decomposed: pass that path exactly)"
    : "";
}

/** The message for a path that does not exist: where we looked, and the closest names there. */
export async function missingFileMessage(path: string, workingDir: string): Promise<string> {
  const lines = [`File does not exist: ${path} (working directory: ${workingDir}).`];
  const dirExists = await stat(dirname(path)).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!dirExists) {
    const { dir, fileInTheWay } = await nearestExisting(path);
    lines.push(
      fileInTheWay
        ? `${fileInTheWay} is a file, not a directory, so nothing can be inside it.`
        : `Its directory does not exist either; the nearest existing ancestor is ${dir}.`,
    );
  }
  const names = dirExists ? await closeNames(path) : [];
  if (names.length > 0) {
    lines.push(
      `Did you mean ${names.map((n) => join(dirname(path), n)).join(", ")}?${sameNameNote(path, names)}`,
    );
  } else {
    lines.push("Use Glob to find the file by name.");
  }
  return lines.join(" ");
}
