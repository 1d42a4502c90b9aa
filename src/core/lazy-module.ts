import { createRequire } from "node:module";
import { ToolError } from "./errors.js";

const require = createRequire(import.meta.url);

/**
 * A CommonJS dependency loaded on first use instead of at start-up, for the ones only some calls need
 * (legacy encodings, YAML frontmatter): each costs the long-running servers megabytes of heap from the
 * moment it is loaded, and most sessions never touch it. Kept out of the bundle (scripts/postbuild.mjs
 * lists them as external), so it is resolved from node_modules as any dependency is. A dependency that is
 * not installed (a partial install) is an error that says so, at the call that needed it.
 */
export function lazyModule<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      try {
        loaded = require(id) as T;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
        throw new ToolError(
          `cc-tools could not do this: its dependency ${id} is not installed (a partial or broken install). ` +
            "Reinstall cc-tools (npm ci in a checkout, or npm install -g again), then retry.",
        );
      }
    }
    return loaded;
  };
}
