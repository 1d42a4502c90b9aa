import { resolve } from "node:path";
import { builtinBackend } from "./builtin-backend.js";
import type { FileQuery, SearchBackend } from "./query.js";
import { ripgrepBackend } from "./rg-backend.js";
import { findRipgrep } from "./ripgrep.js";

/** ripgrep when a binary is found (and not switched off), else the built-in search. */
export async function searchBackend(): Promise<SearchBackend> {
  const binary = await findRipgrep();
  return binary ? ripgrepBackend(binary) : builtinBackend;
}

export interface HidingBackend extends SearchBackend {
  /** How many distinct files were left out so far. */
  readonly hiddenCount: number;
}

/**
 * A backend whose results leave out the files `hide` names (by absolute path): the files permission
 * rules forbid reading, which a directory-wide search would otherwise show.
 */
export function hidingFiles(backend: SearchBackend, hide: (absolutePath: string) => boolean): HidingBackend {
  const hidden = new Set<string>();
  const visible = (query: FileQuery) => (path: string) => {
    if (!hide(resolve(query.cwd, path))) return true;
    hidden.add(path);
    return false;
  };
  const filtered = <Q extends FileQuery>(query: Q): Q => {
    const { onPath } = query;
    const shown = visible(query);
    return onPath ? { ...query, onPath: (path: string) => shown(path) && onPath(path) } : query;
  };
  return {
    name: backend.name,
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
    matchingFiles: async (query) => (await backend.matchingFiles(filtered(query))).filter(visible(query)),
    countMatches: async (query) =>
      (await backend.countMatches(filtered(query))).filter(([path]) => visible(query)(path)),
    async matchingLines(query) {
      const result = await backend.matchingLines(filtered(query));
      return { ...result, files: result.files.filter((file) => visible(query)(file.path)) };
    },
  };
}

/** The search backend for a call, leaving out what `hide` names when there is anything to hide. */
export async function searchBackendHiding(
  hide: ((absolutePath: string) => boolean) | undefined,
): Promise<SearchBackend & { readonly hiddenCount?: number }> {
  const backend = await searchBackend();
  return hide ? hidingFiles(backend, hide) : backend;
}

/** The note a search adds when permission rules kept files out of its results. */
export function hiddenNote(backend: { readonly hiddenCount?: number }): string {
  const count = backend.hiddenCount ?? 0;
  if (count === 0) return "";
  return `\n\n(${count} ${count === 1 ? "file was" : "files were"} left out: permission rules deny or restrict reading ${count === 1 ? "it" : "them"}.)`;
}
