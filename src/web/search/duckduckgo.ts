import { parseHTML } from "linkedom";
import { ToolError } from "../../core/errors.js";
import { decodeBody } from "../decode.js";
import { fetchUrl } from "../http.js";
import { MAX_SEARCH_RESPONSE_BYTES } from "../limits.js";
import type { ProviderConfig } from "./config.js";
import { providerError, type SearchHit, type SearchProvider, type SearchRequest } from "./provider.js";
import { trustedEndpoint } from "./trusted.js";

/** DuckDuckGo's HTML results page (no API key), read with an HTML parser. */

export type DuckDuckGoPage =
  | { kind: "results"; hits: SearchHit[] }
  /** DuckDuckGo took the request for a bot and answered with a challenge. */
  | { kind: "challenge" }
  /** Neither results, nor "no results", nor a challenge: the page's layout changed. */
  | { kind: "unrecognised" };

const text = (el: { textContent: string | null } | null | undefined) =>
  (el?.textContent ?? "").replace(/\s+/g, " ").trim();

/** A result link's target: DuckDuckGo wraps it as `//duckduckgo.com/l/?uddg=<target>`. */
function targetOf(href: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href, "https://duckduckgo.com/");
  } catch {
    return undefined;
  }
  if (url.hostname.endsWith("duckduckgo.com")) {
    const wrapped = url.searchParams.get("uddg");
    return wrapped && /^https?:\/\//i.test(wrapped) ? wrapped : undefined;
  }
  return /^https?:$/.test(url.protocol) ? url.href : undefined;
}

export function parseDuckDuckGoPage(html: string): DuckDuckGoPage {
  const { document } = parseHTML(html);
  if (document.querySelector(".anomaly-modal, #challenge-form, form[action*='anomaly']"))
    return { kind: "challenge" };
  const results = [...document.querySelectorAll(".result")];
  const hits: SearchHit[] = [];
  for (const result of results) {
    if (result.classList.contains("result--ad") || result.classList.contains("result--no-result")) continue;
    const link = result.querySelector("a.result__a");
    const url = targetOf(link?.getAttribute("href") ?? "");
    if (!link || !url) continue;
    hits.push({ title: text(link) || url, url, snippet: text(result.querySelector(".result__snippet")) });
  }
  if (hits.length > 0) return { kind: "results", hits };
  if (document.querySelector(".no-results, .result--no-result")) return { kind: "results", hits: [] };
  return results.length > 0 ? { kind: "results", hits: [] } : { kind: "unrecognised" };
}

export function duckDuckGoProvider(config: ProviderConfig): SearchProvider {
  return {
    config,
    async search(request: SearchRequest) {
      const url = new URL(config.endpoint);
      url.searchParams.set("q", request.query);
      const response = await fetchUrl(url, {
        ...trustedEndpoint(request.signal),
        maxBytes: MAX_SEARCH_RESPONSE_BYTES,
        headers: { accept: "text/html" },
      });
      if (response.kind === "crossHostRedirect") {
        throw new ToolError(
          `${config.name} redirected the search to ${response.to}; check CC_TOOLS_DUCKDUCKGO_URL.`,
        );
      }
      const page = parseDuckDuckGoPage(decodeBody(response.body, response.headers.get("content-type"), true));
      if (page.kind === "challenge") {
        throw new ToolError(
          `${config.name} took the search for automated traffic and asked for a challenge (HTTP ${response.status}); ` +
            "wait a few minutes before searching again, or set BRAVE_SEARCH_API_KEY to search with the Brave Search API.",
          { metadata: { provider: config.id, status: response.status } },
        );
      }
      if (response.status !== 200) throw providerError(config, response);
      if (page.kind === "unrecognised") {
        throw new ToolError(
          `${config.name}'s results page was not recognised (no results and no "no results" notice; its layout may have changed). ` +
            "Set BRAVE_SEARCH_API_KEY to search with the Brave Search API, or fetch a search page with WebFetch.",
          { metadata: { provider: config.id } },
        );
      }
      return page.hits.slice(0, request.count);
    },
  };
}
