import * as z from "zod";
import { defineTool } from "../../core/tool.js";
import { MAX_PAGE_CHARS } from "../../web/limits.js";
import { fetchTarget } from "../../web/url.js";

/**
 * Room past the page text for the notes around it (which repeat the URL, and URLs can be kilobytes
 * long), so the executor never spills a WebFetch result a second time.
 */
const NOTE_CHARS = 20_000;

const inputSchema = z.strictObject({
  url: z.url().describe("The URL to fetch (http or https)."),
  prompt: z.string().describe('What you want to know from the page, e.g. "the install steps for Linux".'),
});

/** The URL rules judge: the one really fetched (https, GitHub blobs as raw), or as written when it is not one. */
function subjectUrl(url: string): string {
  try {
    return fetchTarget(url).href;
  } catch {
    return url;
  }
}

/**
 * "100,000": grouped by hand, not with toLocaleString, which loads ICU's number formatting and with it
 * about 5 MB of the node binary's locale data into every server's resident memory, for this one string.
 */
const PAGE_CHARS_GROUPED = String(MAX_PAGE_CHARS).replace(/\B(?=(\d{3})+$)/g, ",");

export const webFetchTool = defineTool({
  name: "WebFetch",
  description: `Fetches a URL and returns what the page says.
- HTML pages come back as Markdown: the main article with its headings, lists, code blocks, links and tables, without navigation, scripts, ads or cookie banners. Plain text, Markdown and JSON come back as they are; PDFs as their text.
- prompt says what you want from the page. When a model is configured, a small fast model reads the page and answers the prompt, naming the source; otherwise the page content is returned and the result says the prompt was not applied.
- http is upgraded to https (except for localhost); GitHub file URLs (github.com/…/blob/…) are fetched as raw text.
- A redirect to another host is not followed: the result names the new URL; call WebFetch again with it.
- Results hold at most ${PAGE_CHARS_GROUPED} characters of a page; a longer page is saved to a file the result names, which Read can page through.
- Pages are cached for 15 minutes, so asking about the same page again is cheap.
- Read-only: it cannot log in, post forms or run a page's scripts. Private, link-local and loopback addresses are refused unless an allow rule names the host.`,
  permissionLevel: "readOnly",
  inputSchema,
  maxResultChars: MAX_PAGE_CHARS + NOTE_CHARS,
  permissionSubject: (input) => ({ kind: "url", url: subjectUrl(input.url) }),
  async execute(input, ctx) {
    const { runWebFetch } = await import("../../web/run-webfetch.js");
    return runWebFetch(input, ctx);
  },
});
