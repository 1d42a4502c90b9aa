import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { parseDuckDuckGoPage } from "../../src/web/search/duckduckgo.js";
import { normaliseDomain, onDomain, queryWithDomains } from "../../src/web/search/run-websearch.js";
import { allow, webContext } from "./helpers.js";
import { serve } from "./servers.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/web/${name}`, import.meta.url), "utf8");
const DDG_RESULTS = fixture("duckduckgo-results.html");
const DDG_NONE = fixture("duckduckgo-no-results.html");
const DDG_CHALLENGE = fixture("duckduckgo-challenge.html");
const BRAVE_RESULTS = fixture("brave-results.json");
const BRAVE_RATE_LIMITED = fixture("brave-rate-limited.json");

/** A loopback provider serving one recorded response, recording each request's URL and headers. */
async function provider(status: number, type: string, body: string, headers: Record<string, string> = {}) {
  const requests: Array<{ url: URL; headers: Record<string, string | string[] | undefined> }> = [];
  const server = await serve((req, res) => {
    requests.push({ url: new URL(req.url ?? "/", "http://x"), headers: req.headers });
    res.writeHead(status, { "content-type": type, ...headers }).end(body);
  });
  return { server, requests };
}

async function search(env: Record<string, string>, input: Record<string, unknown>) {
  const ctx = webContext({ env: { BRAVE_SEARCH_API_KEY: "", ...env } });
  const result = await runTool("WebSearch", input, ctx);
  return { result, text: ToolResult.text(result) };
}

describe("WebSearch with DuckDuckGo", () => {
  it("parses the recorded results page into hits, leaving out ads and unwrapping result links", () => {
    const page = parseDuckDuckGoPage(DDG_RESULTS);
    expect(page.kind).toBe("results");
    if (page.kind !== "results") return;
    expect(page.hits.map((h) => h.url)).toEqual([
      "https://nodejs.org/api/fs.html#fspromisesreadfilepath-options",
      "https://stackoverflow.com/questions/46867517/how-to-read-file-with-async-await-properly",
      "https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Promise",
      "https://blog.nodejs.org/en/blog/release/v22.11.0",
    ]);
    expect(page.hits[0]).toEqual({
      title: "File system | Node.js v22.11.0 Documentation",
      url: "https://nodejs.org/api/fs.html#fspromisesreadfilepath-options",
      snippet:
        "Asynchronously reads the entire contents of a file. fsPromises.readFile(path[, options]) returns a Promise that fulfils with the contents & encoding.",
    });
    expect(page.hits[1]!.snippet).toContain("readFile('file.txt', 'utf8')");
  });

  it("lists numbered results with title, URL and snippet from a loopback DuckDuckGo", async () => {
    const ddg = await provider(200, "text/html; charset=UTF-8", DDG_RESULTS);
    const { result, text } = await search(
      { CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin },
      { query: "node fs promises readFile" },
    );
    expect(result.isError).toBe(false);
    expect(text).toMatch(
      /^Web search results for "node fs promises readFile" \(DuckDuckGo\):\n\n1\. File system/,
    );
    expect(text).toContain(
      "1. File system | Node.js v22.11.0 Documentation\n   https://nodejs.org/api/fs.html#fspromisesreadfilepath-options\n   Asynchronously reads",
    );
    expect(text).toContain("4. Node.js 22.11.0 (LTS) | Node.js Blog");
    expect(text).not.toContain("CloudHost");
    expect(ddg.requests[0]!.url.pathname).toBe("/html/");
    expect(ddg.requests[0]!.url.searchParams.get("q")).toBe("node fs promises readFile");
  });

  it("keeps allowed domains with their subdomains, drops blocked ones, and asks the provider for them", async () => {
    const ddg = await provider(200, "text/html", DDG_RESULTS);
    const allowed = await search(
      { CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin },
      { query: "node fs", allowed_domains: ["https://NodeJS.org/api"] },
    );
    expect(allowed.text).toContain("1. File system");
    expect(allowed.text).toContain("2. Node.js 22.11.0 (LTS)");
    expect(allowed.text).not.toContain("stackoverflow.com");
    expect(allowed.text).toContain(
      "(2 results outside the allowed domains, or on blocked ones, were left out.)",
    );
    expect(ddg.requests[0]!.url.searchParams.get("q")).toBe("node fs site:nodejs.org");

    const blocked = await search(
      { CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin },
      { query: "node fs", blocked_domains: ["nodejs.org", "mozilla.org"] },
    );
    expect(blocked.text).toContain("1. node.js - How to read file");
    expect(blocked.text).not.toContain("nodejs.org/");
    expect(blocked.text).not.toContain("developer.mozilla.org");
    expect(ddg.requests[1]!.url.searchParams.get("q")).toBe("node fs -site:nodejs.org -site:mozilla.org");
  });

  it("says so when nothing is found", async () => {
    const ddg = await provider(200, "text/html", DDG_NONE);
    const { result, text } = await search(
      { CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin },
      { query: "qzxv wlorp frindle 9931" },
    );
    expect(result.isError).toBe(false);
    expect(text).toBe(
      'No results for "qzxv wlorp frindle 9931" (searched with DuckDuckGo). Try other or fewer words.',
    );
  });

  it("reports DuckDuckGo's bot challenge as an error naming the provider and what to do", async () => {
    const ddg = await provider(202, "text/html", DDG_CHALLENGE);
    const { result, text } = await search({ CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin }, { query: "node" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/DuckDuckGo took the search for automated traffic .* set BRAVE_SEARCH_API_KEY/);
  });

  it("reports a page it does not recognise instead of saying there were no results", async () => {
    const ddg = await provider(200, "text/html", "<html><body><p>Something else entirely</p></body></html>");
    const { result, text } = await search({ CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin }, { query: "node" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/DuckDuckGo's results page was not recognised/);
  });

  it("reports a provider failure with its status", async () => {
    const ddg = await provider(503, "text/html", "<p>down</p>");
    const { result, text } = await search({ CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin }, { query: "node" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^DuckDuckGo answered HTTP 503 Service Unavailable: it failed; try again later/);
  });
});

describe("WebSearch with the Brave Search API", () => {
  it("sends the key and lists the recorded results", async () => {
    const brave = await provider(200, "application/json", BRAVE_RESULTS);
    const { result, text } = await search(
      { BRAVE_SEARCH_API_KEY: "brave-key", CC_TOOLS_BRAVE_SEARCH_URL: brave.server.origin },
      { query: "node fs promises readFile" },
    );
    expect(result.isError).toBe(false);
    expect(text).toMatch(/^Web search results for "node fs promises readFile" \(Brave Search\):/);
    expect(text).toContain(
      "1. File system | Node.js v22.11.0 Documentation\n   https://nodejs.org/api/fs.html\n   Asynchronously reads the entire contents of a file. fsPromises.readFile(path[, options]) returns a Promise that fulfils with the contents & encoding.",
    );
    expect(text).toContain("readFile('file.txt', 'utf8')");
    expect(text).toContain("3. Node.js 22.11.0 (LTS) | Node.js Blog");
    const request = brave.requests[0]!;
    expect(request.url.pathname).toBe("/res/v1/web/search");
    expect(request.url.searchParams.get("q")).toBe("node fs promises readFile");
    expect(request.headers["x-subscription-token"]).toBe("brave-key");
  });

  it("reports the rate limit with when to retry", async () => {
    const brave = await provider(429, "application/json", BRAVE_RATE_LIMITED, {
      "x-ratelimit-limit": "1, 2000",
      "x-ratelimit-reset": "1, 1419704",
    });
    const { result, text } = await search(
      { BRAVE_SEARCH_API_KEY: "k", CC_TOOLS_BRAVE_SEARCH_URL: brave.server.origin },
      { query: "node" },
    );
    expect(result.isError).toBe(true);
    expect(text).toBe(
      "Brave Search answered HTTP 429 Too Many Requests (RATE_LIMITED: Request rate limit exceeded for plan.): the rate limit is reached; wait 1 s before searching again, or unset BRAVE_SEARCH_API_KEY to search with DuckDuckGo instead.",
    );
  });

  it("reports a refused key", async () => {
    const body = JSON.stringify({
      type: "ErrorResponse",
      error: {
        status: 401,
        code: "SUBSCRIPTION_TOKEN_INVALID",
        detail: "The provided subscription token is invalid.",
      },
    });
    const brave = await provider(401, "application/json", body);
    const { text } = await search(
      { BRAVE_SEARCH_API_KEY: "wrong", CC_TOOLS_BRAVE_SEARCH_URL: brave.server.origin },
      { query: "node" },
    );
    expect(text).toMatch(
      /Brave Search answered HTTP 401 .*SUBSCRIPTION_TOKEN_INVALID.*check BRAVE_SEARCH_API_KEY/,
    );
  });
});

describe("WebSearch domains and permission", () => {
  it("reduces written domains to hosts and matches subdomains only on label boundaries", () => {
    expect(normaliseDomain("https://Docs.Python.org/3/", "allowed_domains")).toBe("docs.python.org");
    expect(normaliseDomain("*.example.com", "allowed_domains")).toBe("example.com");
    expect(() => normaliseDomain("not a domain", "blocked_domains")).toThrow(
      /blocked_domains holds "not a domain"/,
    );
    expect(onDomain("https://docs.example.com/x", "example.com")).toBe(true);
    expect(onDomain("https://example.com/", "example.com")).toBe(true);
    expect(onDomain("https://badexample.com/", "example.com")).toBe(false);
    expect(queryWithDomains("q", ["a.com", "b.org"], ["c.net"])).toBe(
      "q (site:a.com OR site:b.org) -site:c.net",
    );
  });

  it("asks before searching in default mode (the query leaves the machine); a WebSearch rule allows it", async () => {
    const ddg = await provider(200, "text/html", DDG_RESULTS);
    const env = { BRAVE_SEARCH_API_KEY: "", CC_TOOLS_DUCKDUCKGO_URL: ddg.server.origin };
    const asked = await runTool(
      "WebSearch",
      { query: "node" },
      webContext({ permissionMode: "default", env }),
    );
    expect(asked.isError).toBe(true);
    expect(ToolResult.text(asked)).toMatch(/reaches the network.*WebSearch/s);
    expect(ddg.requests).toHaveLength(0);
    const allowed = await runTool(
      "WebSearch",
      { query: "node" },
      webContext({ permissionMode: "default", env, rules: allow("WebSearch") }),
    );
    expect(allowed.isError).toBe(false);
  });
});
