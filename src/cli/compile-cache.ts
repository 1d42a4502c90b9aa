import module from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Node 22.1 and later can keep the compiled code of the modules it loads on disk and reuse it on the next
 * start (module.enableCompileCache). cc-tools starts often (every MCP client connection, every `run`), so it
 * turns the cache on for its own process. The cache lives with the user's other caches
 * (`$XDG_CACHE_HOME/cc-tools/compile-cache`, else `~/.cache/cc-tools/compile-cache`); Node owns its
 * contents, keys them by Node version and file, and replaces stale entries, so it stays the size of one
 * copy of cc-tools per Node version. NODE_COMPILE_CACHE (a directory) or NODE_DISABLE_COMPILE_CACHE=1 in the
 * environment take precedence, as Node documents. On Node 20, which has no such cache, this does nothing.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (!enable || env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return;
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  try {
    enable(join(base, "cc-tools", "compile-cache"));
  } catch {
    // A cache that cannot be set up (read-only home, say) only costs start-up time.
  }
}
