import type { ToolContext } from "../../core/context.js";
import { configuredEnv } from "../../core/env.js";
import { ToolError } from "../../core/errors.js";

/**
 * Which search provider WebSearch uses, and where it is: the Brave Search API when BRAVE_SEARCH_API_KEY
 * is set, else DuckDuckGo's HTML results page. Base URLs come from settings `env` or the environment
 * (CC_TOOLS_BRAVE_SEARCH_URL, CC_TOOLS_DUCKDUCKGO_URL), so tests and proxies can point them elsewhere.
 */

export interface ProviderConfig {
  id: "brave" | "duckduckgo";
  /** For messages: "Brave Search", "DuckDuckGo". */
  name: string;
  /** The endpoint a query is sent to (without the query). */
  endpoint: URL;
  apiKey?: string;
}

export const BRAVE_BASE_URL = "https://api.search.brave.com";
export const DUCKDUCKGO_BASE_URL = "https://html.duckduckgo.com";

function endpoint(base: string, path: string, variable: string): URL {
  try {
    return new URL(path, base.endsWith("/") ? base : `${base}/`);
  } catch {
    throw new ToolError(
      `${variable} "${base}" is not a URL; set it to a base URL such as ${path === "html/" ? DUCKDUCKGO_BASE_URL : BRAVE_BASE_URL}.`,
    );
  }
}

export function searchProvider(ctx: Pick<ToolContext, "config">): ProviderConfig {
  const apiKey = configuredEnv(ctx, "BRAVE_SEARCH_API_KEY");
  if (apiKey) {
    const base = configuredEnv(ctx, "CC_TOOLS_BRAVE_SEARCH_URL") || BRAVE_BASE_URL;
    return {
      id: "brave",
      name: "Brave Search",
      endpoint: endpoint(base, "res/v1/web/search", "CC_TOOLS_BRAVE_SEARCH_URL"),
      apiKey,
    };
  }
  const base = configuredEnv(ctx, "CC_TOOLS_DUCKDUCKGO_URL") || DUCKDUCKGO_BASE_URL;
  return {
    id: "duckduckgo",
    name: "DuckDuckGo",
    endpoint: endpoint(base, "html/", "CC_TOOLS_DUCKDUCKGO_URL"),
  };
}
