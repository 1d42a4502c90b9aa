/** The built-in search's directory walk: ripgrep's rules for ignore files, hidden files, globs and types. */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { ToolError } from "../core/errors.js";
import { GlobFilter } from "./globs.js";
import { IgnoreRules } from "./ignore-rules.js";
import { type FileQuery, PROGRESS_EVERY_FILES, VCS_DIRS } from "./query.js";

const VCS = new Set<string>(VCS_DIRS);

/**
 * Yields absolute paths of the files to search, in name order. Symbolic links are not followed (rg's
 * default). `typeTest` only applies to files no glob included, as in rg.
 */
export async function* walkFiles(
  query: FileQuery,
  typeTest?: (name: string) => boolean,
): AsyncGenerator<string> {
  if (query.rootIsFile) {
    yield query.root;
    return;
  }
  const filter = new GlobFilter(query.globs);
  const rules = query.respectIgnore ? new IgnoreRules(query.root, { explicitRoot: true }) : undefined;
  const stack = [{ dir: query.root, rel: "" }];
  let seen = 0;
  while (stack.length > 0) {
    if (query.signal.aborted) throw new ToolError("The search was cancelled.");
    const { dir, rel } = stack.pop()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: Array<{ dir: string; rel: string }> = [];
    for (const entry of entries) {
      if (VCS.has(entry.name)) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        const verdict = filter.verdict(childRel, true);
        if (verdict === "exclude") continue;
        if (verdict === "none" && rules?.ignoresEntry(dir, entry.name, true)) continue;
        subdirs.push({ dir: join(dir, entry.name), rel: childRel });
      } else if (entry.isFile()) {
        const verdict = filter.verdict(childRel, false);
        if (verdict === "exclude") continue;
        if (verdict === "none") {
          if (rules?.ignoresEntry(dir, entry.name, false)) continue;
          if (typeTest && !typeTest(entry.name)) continue;
        }
        if (++seen % PROGRESS_EVERY_FILES === 0) query.onProgress?.(seen);
        yield join(dir, entry.name);
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}
