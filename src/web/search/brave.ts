import { ToolError } from "../../core/errors.js";
import { fetchUrl } from "../http.js";
import { MAX_SEARCH_RESPONSE_BYTES } from "../limits.js";
import type { ProviderConfig } from "./config.js";
import { htmlText } from "./html-text.js";
import { providerError, type SearchHit, type SearchProvider, type SearchRequest } from "./provider.js";
import { trustedEndpoint } from "./trusted.js";

/** The Brave Search API's web search (https://api-dashboard.search.brave.com/app/documentation). */

interface BraveResponse {
  web?: { results?: Array<{ title?: string; url?: string; description?: string }> };
  error?: { code?: string; detail?: string };
}

/** Brave's most results per request. */
const BRAVE_MAX_COUNT = 20;

export function parseBraveResponse(body: string): SearchHit[] {
  const parsed = JSON.parse(body) as BraveResponse;
  return (parsed.web?.results ?? [])
    .filter((r) => typeof r.url === "string" && r.url !== "")
    .map((r) => ({
      title: htmlText(r.title ?? r.url!),
      url: r.url!,
      snippet: htmlText(r.description ?? ""),
    }));
}

export function braveProvider(config: ProviderConfig): SearchProvider {
  return {
    config,
    async search(request: SearchRequest) {
      const url = new URL(config.endpoint);
      url.searchParams.set("q", request.query);
      url.searchParams.set("count", String(Math.min(request.count, BRAVE_MAX_COUNT)));
      const response = await fetchUrl(url, {
        ...trustedEndpoint(request.signal),
        maxBytes: MAX_SEARCH_RESPONSE_BYTES,
        headers: { accept: "application/json", "x-subscription-token": config.apiKey ?? "" },
      });
      if (response.kind === "crossHostRedirect") {
        throw new ToolError(
          `${config.name} redirected the search to ${response.to}; check CC_TOOLS_BRAVE_SEARCH_URL.`,
        );
      }
      const body = response.body.toString("utf8");
      if (response.status !== 200) {
        let detail = "";
        try {
          const error = (JSON.parse(body) as BraveResponse).error;
          detail = [error?.code, error?.detail].filter(Boolean).join(": ");
        } catch {
          // not JSON: the status says enough
        }
        throw providerError(config, response, detail);
      }
      try {
        return parseBraveResponse(body);
      } catch (error) {
        throw new ToolError(
          `${config.name} answered with something that is not its JSON (${(error as Error).message}); try again later, or unset BRAVE_SEARCH_API_KEY to search with DuckDuckGo.`,
        );
      }
    },
  };
}
