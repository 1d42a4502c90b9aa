import module from "node:module";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * Node 22.1 and later can keep the compiled code of the modules it loads on disk and reuse it on the next
 * start (module.enableCompileCache). cc-tools starts often (every MCP client connection, every `run`), so it
 * turns the cache on for its own process. The cache lives with the user's other caches
 * (`$XDG_CACHE_HOME/cc-tools/compile-cache`, else `~/.cache/cc-tools/compile-cache`); Node owns its
 * contents, keys them by Node version, V8's flags when the cache is turned on, and file, and replaces
 * stale entries. `cc-tools mcp` holds V8's optimizing compilers before this runs (hold-compilers.ts), so
 * its directory is apart from the other commands': two copies of cc-tools per Node version.
 * NODE_COMPILE_CACHE (a directory) or NODE_DISABLE_COMPILE_CACHE=1 in the environment take precedence, as
 * Node documents. On Node 20, which has no such cache, this does nothing.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (!enable || env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return;
  try {
    // A relative XDG_CACHE_HOME is ignored, as the XDG spec says (it would land in the user's project).
    const xdg = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
    // homedir() throws where there is no HOME and no passwd entry (a container run as an unknown uid).
    const base = xdg ?? join(env.HOME || homedir(), ".cache");
    enable(join(base, "cc-tools", "compile-cache"));
  } catch {
    // A cache that cannot be set up (no home, a read-only one) only costs start-up time.
  }
}
