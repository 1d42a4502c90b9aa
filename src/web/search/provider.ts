import { ToolError } from "../../core/errors.js";
import type { FetchedResponse } from "../http.js";
import type { ProviderConfig } from "./config.js";

/** One search result, as every provider returns it. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchRequest {
  /** The query as sent, domain operators included. */
  query: string;
  count: number;
  signal: AbortSignal;
}

/** A search provider: sends a query, returns hits in rank order (an empty list when nothing matched). */
export interface SearchProvider {
  readonly config: ProviderConfig;
  search(request: SearchRequest): Promise<SearchHit[]>;
}

/** A provider's refusal or failure, naming the provider and what to do. */
export function providerError(config: ProviderConfig, response: FetchedResponse, detail = ""): ToolError {
  const { status, statusText } = response;
  const said = detail ? ` (${detail})` : "";
  const fallback =
    config.id === "brave"
      ? "unset BRAVE_SEARCH_API_KEY to search with DuckDuckGo instead"
      : "set BRAVE_SEARCH_API_KEY to search with the Brave Search API instead";
  let advice: string;
  if (status === 429) {
    const reset = response.headers.get("x-ratelimit-reset")?.split(",")[0]?.trim();
    advice = `the rate limit is reached; wait${reset ? ` ${reset} s` : " a minute"} before searching again, or ${fallback}`;
  } else if (status === 401 || status === 403) {
    advice =
      config.id === "brave"
        ? "the API key was refused; check BRAVE_SEARCH_API_KEY (a key from https://api-dashboard.search.brave.com)"
        : `it refused the request; wait a few minutes and retry, or ${fallback}`;
  } else if (status >= 500) advice = `it failed; try again later, or ${fallback}`;
  else advice = `the request was not accepted; rephrase the query, or ${fallback}`;
  return new ToolError(`${config.name} answered HTTP ${status} ${statusText}${said}: ${advice}.`, {
    metadata: { provider: config.id, status },
  });
}
