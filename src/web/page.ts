import { ToolError } from "../core/errors.js";
import { decodeBody, mediaType } from "./decode.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { type CrossHostRedirect, type FetchedResponse, type FetchOptions, fetchUrl } from "./http.js";

/** A fetched URL as text for a model: HTML as Markdown, text and JSON as they are, PDFs as their text. */

export type PageFormat = "markdown" | "text" | "json" | "pdf";

export interface Page {
  kind: "page";
  /** The URL that answered (after redirects within the host). */
  url: string;
  status: number;
  /** The media type the server declared, or what the body was recognised as. */
  contentType: string;
  format: PageFormat;
  title: string | undefined;
  text: string;
}

const TEXT_TYPES = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/xml",
  "application/x-yaml",
  "application/yaml",
  "application/toml",
  "application/x-sh",
  "application/sql",
  "application/graphql",
]);

type Kind = "html" | "markdown" | "text" | "json" | "pdf";

function kindOf(type: string): Kind | undefined {
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "text/markdown" || type === "text/x-markdown") return "markdown";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/pdf") return "pdf";
  if (type.startsWith("text/") || type.endsWith("+xml") || TEXT_TYPES.has(type)) return "text";
  return undefined;
}

/** What an undeclared (or `application/octet-stream`) body is, by its first bytes. */
function sniff(body: Buffer): Kind | undefined {
  const head = body.subarray(0, 512).toString("latin1").trimStart().toLowerCase();
  if (head.startsWith("%pdf-")) return "pdf";
  if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
  if (head.startsWith("{") || head.startsWith("[")) {
    try {
      JSON.parse(body.toString("utf8"));
      return "json";
    } catch {
      // not JSON after all
    }
  }
  return body.subarray(0, 8192).includes(0) ? undefined : "text";
}

function statusError(response: FetchedResponse): ToolError {
  const { status, statusText, url } = response;
  const what = `${url} answered HTTP ${status} ${statusText}`;
  let advice: string;
  if (status === 404 || status === 410)
    advice = "the page does not exist (any more). Check the address, or search for the page's current URL.";
  else if (status === 401 || status === 403)
    advice = "the server refuses access without a login or to automated clients; WebFetch cannot log in.";
  else if (status === 429) advice = "the server is rate-limiting requests. Wait before trying again.";
  else if (status >= 500) advice = "the server failed to answer. Try again later.";
  else advice = "no page content came back.";
  return new ToolError(`${what}: ${advice}`, { metadata: { reason: "status", status } });
}

async function pdfText(body: Buffer, url: string): Promise<string> {
  const { PDFParse } = await import("pdf-parse");
  const parser = new PDFParse({ data: new Uint8Array(body) });
  try {
    const result = await parser.getText();
    return result.pages
      .map(
        (p) =>
          `--- Page ${p.num} of ${result.total} ---\n${p.text.trim() || "[no extractable text on this page]"}`,
      )
      .join("\n\n");
  } catch (error) {
    throw new ToolError(
      `${url} is a PDF that cannot be parsed (${(error as Error).message}); it may be encrypted or damaged. Download it with Bash (curl -o) and try another extractor such as pdftotext.`,
    );
  } finally {
    await parser.destroy();
  }
}

/** Turns a successful response into page text, by its content type. */
export async function pageFromResponse(response: FetchedResponse): Promise<Page> {
  if (response.status < 200 || response.status > 299) throw statusError(response);
  const header = response.headers.get("content-type");
  const declared = mediaType(header);
  const kind =
    declared === "" || declared === "application/octet-stream" ? sniff(response.body) : kindOf(declared);
  if (kind === undefined) {
    throw new ToolError(
      `${response.url} is ${declared || "binary data"}, not a page WebFetch can read (it reads HTML, text, Markdown, JSON and PDF). Download it with Bash (curl -o file) if you need the file itself.`,
      { metadata: { reason: "content-type", contentType: declared } },
    );
  }
  const page = {
    kind: "page" as const,
    url: response.url,
    status: response.status,
    contentType: declared || kind,
  };
  if (kind === "pdf")
    return { ...page, format: "pdf", title: undefined, text: await pdfText(response.body, response.url) };
  const text = decodeBody(response.body, header, kind === "html");
  if (kind === "html") {
    const converted = htmlToMarkdown(text, response.url);
    return { ...page, format: "markdown", title: converted.title, text: converted.markdown };
  }
  return {
    ...page,
    format: kind === "json" ? "json" : kind === "markdown" ? "markdown" : "text",
    title: undefined,
    text,
  };
}

/** Fetches a URL and reads it as a page; a redirect to another host comes back unfollowed. */
export async function readPage(url: URL, options: FetchOptions): Promise<Page | CrossHostRedirect> {
  const response = await fetchUrl(url, options);
  if (response.kind === "crossHostRedirect") return response;
  return pageFromResponse(response);
}
