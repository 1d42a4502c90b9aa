import { resolve, sep } from "node:path";
import type { SearchRestriction } from "../permissions/read-restriction.js";
import { builtinBackend } from "./builtin-backend.js";
import { displayPrefix } from "./paths.js";
import type { FileQuery, SearchBackend } from "./query.js";
import { ripgrepBackend } from "./rg-backend.js";
import { findRipgrep } from "./ripgrep.js";

/** ripgrep when a binary is found (and not switched off), else the built-in search. */
export async function searchBackend(): Promise<SearchBackend> {
  const binary = await findRipgrep();
  return binary ? ripgrepBackend(binary) : builtinBackend;
}

/** A path below a root that is not plainly a path below it: empty, absolute, or with a `.` or `..` part. */
const NOT_PLAIN = /^$|^\/|(?:^|\/)\.\.?(?:\/|$)/;

export interface HidingBackend extends SearchBackend {
  /** How many distinct files a listing (newestFiles) left out so far. */
  readonly hiddenCount: number;
  /** Permission rules restrict what this backend reads. */
  readonly restricted: true;
}

/**
 * A backend that leaves out the files permission rules forbid reading, which a directory-wide search would
 * otherwise show. They are left out before anything is read (rg gets them as exclude globs, the built-in
 * search skips them in its walk), so whether one matches the pattern changes nothing in the result; the
 * results are filtered again by `restriction.hides`, which judges what the globs do not express.
 */
export function hidingFiles(backend: SearchBackend, restriction: SearchRestriction): HidingBackend {
  const hidden = new Set<string>();
  // One test per query, applied to every listed display path (relative to cwd, or absolute). The backends
  // print the root's display prefix and then the path below it: that part is tested as it is.
  const test = (query: FileQuery) => {
    const hides = restriction.below(query.root);
    const shown = displayPrefix(query.cwd, query.root);
    return (path: string) => {
      if (sep === "/" && path.startsWith(shown)) {
        const rel = path.slice(shown.length);
        if (!NOT_PLAIN.test(rel)) return hides.relative(rel);
      }
      return hides(resolve(query.cwd, path));
    };
  };
  const visible = (query: FileQuery) => {
    const hides = test(query);
    return (path: string) => {
      if (!hides(path)) return true;
      hidden.add(path);
      return false;
    };
  };
  const searched = (query: FileQuery) => {
    const hides = test(query);
    return (path: string) => !hides(path);
  };
  const before = <Q extends FileQuery>(query: Q): Q => {
    const shown = searched(query);
    const { onPath, exclude } = query;
    return {
      ...query,
      deniedGlobs: query.rootIsFile ? [] : restriction.excludeGlobs(query.root),
      exclude: (path: string) => !shown(path) || (exclude?.(path) ?? false),
      ...(onPath ? { onPath: (path: string) => shown(path) && onPath(path) } : {}),
    };
  };
  return {
    name: backend.name,
    restricted: true,
    get hiddenCount() {
      return hidden.size;
    },
    newestFiles: (query, limit) => {
      const shown = visible(query);
      return backend.newestFiles(
        { ...query, exclude: (path) => !shown(path) || (query.exclude?.(path) ?? false) },
        limit,
      );
    },
    matchingFiles: async (query) => (await backend.matchingFiles(before(query))).filter(searched(query)),
    countMatches: async (query) => {
      const shown = searched(query);
      return (await backend.countMatches(before(query))).filter(([path]) => shown(path));
    },
    async matchingLines(query) {
      const result = await backend.matchingLines(before(query));
      const shown = searched(query);
      return { ...result, files: result.files.filter((file) => shown(file.path)) };
    },
  };
}

/** The search backend for a call, leaving out what `restriction` covers when there is anything to hide. */
export async function searchBackendHiding(
  restriction: SearchRestriction | undefined,
): Promise<SearchBackend & { readonly hiddenCount?: number; readonly restricted?: true }> {
  const backend = await searchBackend();
  return restriction ? hidingFiles(backend, restriction) : backend;
}

/** Glob's note when permission rules kept files out of a listing (names only: a listing reads no content). */
export function hiddenNote(backend: { readonly hiddenCount?: number }): string {
  const count = backend.hiddenCount ?? 0;
  if (count === 0) return "";
  return `\n\n(${count} ${count === 1 ? "file was" : "files were"} left out: permission rules deny or restrict reading ${count === 1 ? "it" : "them"}.)`;
}

/**
 * Grep's note under Read deny or ask rules. The same words whatever the pattern and whatever the files
 * hold, so the note cannot tell anyone whether a left-out file matches.
 */
export function unsearchedNote(backend: { readonly restricted?: true }): string {
  return backend.restricted ? "\n\n(Files covered by Read deny or ask rules were not searched.)" : "";
}
