import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * A CommonJS dependency loaded on first use instead of at start-up, for the ones only some calls need
 * (legacy encodings, YAML frontmatter): each costs the long-running servers megabytes of heap from the
 * moment it is loaded, and most sessions never touch it. Kept out of the bundle (scripts/postbuild.mjs
 * lists them as external), so it is resolved from node_modules as any dependency is.
 */
export function lazyModule<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(id) as T;
    return loaded;
  };
}
