import type { ToolCallContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import { ToolResult } from "../../core/result.js";
import { MAX_SEARCH_RESULTS, SEARCH_FETCH_COUNT } from "../limits.js";
import { braveProvider } from "./brave.js";
import { type ProviderConfig, searchProvider } from "./config.js";
import { duckDuckGoProvider } from "./duckduckgo.js";
import type { SearchHit, SearchProvider } from "./provider.js";

/** What WebSearch does once its call is allowed: query the provider, keep the allowed domains, list. */

export interface WebSearchInput {
  query: string;
  allowed_domains?: string[];
  blocked_domains?: string[];
}

const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/** A domain as the caller may write it (`https://Docs.Python.org/3/`, `*.example.com`) reduced to its host. */
export function normaliseDomain(written: string, parameter: string): string {
  const host = written
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "")
    .replace(/^(\*\.|\.)/, "")
    .replace(/\.$/, "");
  if (!DOMAIN.test(host)) {
    throw new InputError(
      `${parameter} holds "${written}", which is not a domain; write domains such as "example.com".`,
    );
  }
  return host;
}

/** True when the URL's host is the domain or one of its subdomains. */
export function onDomain(url: string, domain: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return false;
  }
  return host === domain || host.endsWith(`.${domain}`);
}

/** The query with site: operators, so the provider spends its results on the wanted domains. */
export function queryWithDomains(
  query: string,
  allowed: readonly string[],
  blocked: readonly string[],
): string {
  const parts = [query.trim()];
  if (allowed.length === 1) parts.push(`site:${allowed[0]}`);
  else if (allowed.length > 1) parts.push(`(${allowed.map((d) => `site:${d}`).join(" OR ")})`);
  for (const domain of blocked) parts.push(`-site:${domain}`);
  return parts.join(" ");
}

export function formatResults(
  query: string,
  provider: ProviderConfig,
  hits: readonly SearchHit[],
  leftOut: number,
  domains: string,
): string {
  if (hits.length === 0) {
    return `No results for "${query}"${domains} (searched with ${provider.name}). Try other or fewer words${domains ? ", or other domains" : ""}.`;
  }
  const lines = [`Web search results for "${query}"${domains} (${provider.name}):`, ""];
  hits.forEach((hit, i) => {
    lines.push(`${i + 1}. ${hit.title}`, `   ${hit.url}`);
    if (hit.snippet) lines.push(`   ${hit.snippet}`);
    lines.push("");
  });
  if (leftOut > 0)
    lines.push(`(${leftOut} results outside the allowed domains, or on blocked ones, were left out.)`);
  lines.push("Fetch a result with WebFetch to read it.");
  return lines.join("\n").trimEnd();
}

function providerFor(config: ProviderConfig): SearchProvider {
  return config.id === "brave" ? braveProvider(config) : duckDuckGoProvider(config);
}

export async function runWebSearch(input: WebSearchInput, ctx: ToolCallContext): Promise<ToolResult> {
  const allowed = (input.allowed_domains ?? []).map((d) => normaliseDomain(d, "allowed_domains"));
  const blocked = (input.blocked_domains ?? []).map((d) => normaliseDomain(d, "blocked_domains"));
  const query = input.query.trim();
  if (query.length < 2) throw new InputError("query is empty; give at least two characters to search for.");
  const provider = providerFor(searchProvider(ctx));
  const found = await provider.search({
    query: queryWithDomains(query, allowed, blocked),
    count: SEARCH_FETCH_COUNT,
    signal: ctx.signal,
  });
  const kept = found.filter(
    (hit) =>
      (allowed.length === 0 || allowed.some((d) => onDomain(hit.url, d))) &&
      !blocked.some((d) => onDomain(hit.url, d)),
  );
  const shown = kept.slice(0, MAX_SEARCH_RESULTS);
  const domains = [
    allowed.length > 0 ? ` on ${allowed.join(", ")}` : "",
    blocked.length > 0 ? ` excluding ${blocked.join(", ")}` : "",
  ].join("");
  return ToolResult.success(
    formatResults(query, provider.config, shown, found.length - kept.length, domains),
    {
      provider: provider.config.id,
      results: shown,
    },
  );
}
