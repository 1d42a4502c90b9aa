import * as z from "zod";
import { defineTool } from "../../core/tool.js";
import { MAX_SEARCH_RESULTS } from "../../web/limits.js";
import { searchProvider } from "../../web/search/config.js";

const inputSchema = z.strictObject({
  query: z.string().min(2).describe("What to search the web for."),
  allowed_domains: z
    .array(z.string())
    .optional()
    .describe('Only list results from these domains and their subdomains, e.g. ["nodejs.org"].'),
  blocked_domains: z
    .array(z.string())
    .optional()
    .describe("Never list results from these domains or their subdomains."),
});

export const webSearchTool = defineTool({
  name: "WebSearch",
  description: `Searches the web and returns a numbered list of results: title, URL and a snippet each (at most ${MAX_SEARCH_RESULTS}).
- Use it for anything past your knowledge: current versions, recent releases, error messages, documentation you need to find.
- allowed_domains keeps only results from those domains (subdomains included); blocked_domains leaves those out.
- Uses the Brave Search API when BRAVE_SEARCH_API_KEY is set, otherwise DuckDuckGo.
- Read a result with WebFetch; cite the URLs you relied on when you answer.`,
  permissionLevel: "readOnly",
  inputSchema,
  // The query leaves the machine for the provider's host: rules judge that endpoint like a fetch.
  permissionSubject: (_input, ctx) => {
    try {
      return { kind: "url", url: searchProvider(ctx).endpoint.href };
    } catch {
      return { kind: "url", url: "about:invalid" };
    }
  },
  async execute(input, ctx) {
    const { runWebSearch } = await import("../../web/search/run-websearch.js");
    return runWebSearch(input, ctx);
  },
});
