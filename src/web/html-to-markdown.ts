import { isProbablyReaderable, Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

/**
 * A web page as Markdown: the main content (Readability on a linkedom DOM), or the whole body when the
 * page has no article (an index, a bare page), converted by turndown with rules for fenced code with its
 * language, GFM tables and links made absolute. Scripts, styles, navigation, footers and cookie banners
 * do not come through.
 */

export interface ConvertedPage {
  title: string | undefined;
  markdown: string;
  /** True when the main content was found (by Readability, or a large page's main element); false when the whole body was converted. */
  article: boolean;
}

/** Never content, on any page: code, styles, embedded frames, and controls (their text is labels). */
const ALWAYS_NOISE =
  "script, style, noscript, template, iframe, object, embed, canvas, svg, link, meta, button, input, select, textarea, dialog";
/** What makes a form more than a form: some sites (ASP.NET WebForms) wrap the whole page in one. */
const TEXT_BLOCKS = "main, article, h1, h2, h3, p, pre, table, ul, ol";
/** Cookie and consent banners, overlays asking for a choice. */
const BANNER = /(^|[\s_-])(cookie|cookies|consent|gdpr|cmp|onetrust|truste)([\s_-]|$)/i;
/** Page furniture inside a main element (a header there usually holds the title, so it stays). */
const FURNITURE_INSIDE =
  'nav, footer, aside, [role="navigation"], [role="contentinfo"], [role="complementary"], [role="search"], ' +
  '[role="dialog"], [hidden], [aria-hidden="true"]';
/** Page furniture, removed when the whole body is converted (Readability leaves it out of an article). */
const FURNITURE = `header, [role="banner"], ${FURNITURE_INSIDE}`;
/**
 * Above this many characters of HTML, Readability (whose scoring grows faster than the page, seconds for a
 * few megabytes on linkedom) is skipped: the page's main element, or its body, is converted instead.
 */
export const READABILITY_MAX_HTML_CHARS = 1_000_000;
/** Class and id words of ads, share bars and other blocks around an article. */
const FURNITURE_NAME =
  /(^|[\s_-])(ad|ads|advert|advertisement|sponsor|sponsored|promo|banner|sidebar|share|social|newsletter|popup|breadcrumbs?|skip-link|toc-mobile)([\s_-]|$)/i;

const CONTENT_TAGS = new Set(["HTML", "BODY", "MAIN", "ARTICLE"]);

/** Class names that mark the language of a code block: `language-ts`, `lang-py`, Sphinx, GitHub, pandoc. */
const LANGUAGE_CLASS =
  /(?:^|\s)(?:language-|lang-|highlight-source-|highlight-(?!source)|brush:\s*|sourceCode\s+)([A-Za-z0-9_+#.-]+)/;
const NOT_A_LANGUAGE = new Set([
  "none",
  "text",
  "plain",
  "plaintext",
  "nohighlight",
  "default",
  "notranslate",
]);

type Doc = ReturnType<typeof parseHTML>["document"];
// linkedom's node types are its own; turndown's and Readability's are the DOM's. They meet here only.
// biome-ignore lint/suspicious/noExplicitAny: see above.
type AnyNode = any;
type ReadableDocument = ConstructorParameters<typeof Readability>[0];

function removeAll(root: AnyNode, selector: string): void {
  for (const el of [...root.querySelectorAll(selector)]) el.remove();
}

function classAndId(el: AnyNode): string {
  return `${el.getAttribute?.("class") ?? ""} ${el.getAttribute?.("id") ?? ""}`;
}

/** The page's base for relative links: its <base href>, resolved against the URL it came from. */
function baseUrl(document: Doc, pageUrl: string): string {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

function absolutize(document: Doc, pageUrl: string): void {
  const base = baseUrl(document, pageUrl);
  const fix = (el: AnyNode, attribute: string) => {
    const value = el.getAttribute(attribute);
    if (value === null || value.startsWith("#") || /^(data|javascript|mailto|tel):/i.test(value)) return;
    try {
      el.setAttribute(attribute, new URL(value, base).href);
    } catch {
      // left as written: turndown keeps the text
    }
  };
  for (const a of document.querySelectorAll("a[href]")) fix(a, "href");
  for (const img of document.querySelectorAll("img[src]")) fix(img, "src");
}

/** An element named like furniture that wraps the content anyway (`<main class="has-sidebar">`). */
function holdsContent(el: AnyNode): boolean {
  return CONTENT_TAGS.has(el.tagName) || el.querySelector("main, article, h1") !== null;
}

/** A parsed page with what is never content removed and links made absolute. */
function prepare(html: string, pageUrl: string): Doc {
  const { document } = parseHTML(
    /<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`,
  );
  removeAll(document, ALWAYS_NOISE);
  for (const form of [...document.querySelectorAll("form")]) {
    if (form.querySelector(TEXT_BLOCKS) === null) form.remove();
  }
  for (const el of [...document.querySelectorAll("[id], [class]")]) {
    const names = classAndId(el);
    if ((BANNER.test(names) || FURNITURE_NAME.test(names)) && !holdsContent(el)) el.remove();
  }
  absolutize(document, pageUrl);
  return document;
}

function codeLanguage(pre: AnyNode): string {
  const code = pre.querySelector?.("code");
  const candidates = [code, pre, pre.parentNode, pre.parentNode?.parentNode];
  for (const el of candidates) {
    if (!el?.getAttribute) continue;
    const data = el.getAttribute("data-lang") ?? el.getAttribute("data-language");
    if (data && !NOT_A_LANGUAGE.has(data.toLowerCase())) return data.toLowerCase();
    const match = LANGUAGE_CLASS.exec(el.getAttribute("class") ?? "");
    if (match && !NOT_A_LANGUAGE.has(match[1]!.toLowerCase())) return match[1]!.toLowerCase();
  }
  return "";
}

/** A fence longer than any run of backticks in the code, so the code cannot close it. */
function fenceFor(code: string): string {
  const longest = Math.max(0, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

function closestTable(node: AnyNode): AnyNode {
  let current = node.parentNode;
  while (current && current.nodeName !== "TABLE") current = current.parentNode;
  return current;
}

/** A table of data (no table inside it): becomes a GFM table; a layout table becomes plain blocks. */
function isDataTable(table: AnyNode): boolean {
  if (table === null) return false;
  // Asked once per cell and row: remembered per table, so a big table is not searched once per cell.
  let known = dataTables.get(table);
  if (known === undefined) {
    known = table.querySelector("table") === null;
    dataTables.set(table, known);
  }
  return known;
}
const dataTables = new WeakMap<object, boolean>();

function firstRow(table: AnyNode): AnyNode {
  return table.querySelector("tr");
}

function columnCount(row: AnyNode): number {
  let count = 0;
  for (const cell of row.children) {
    if (cell.nodeName === "TH" || cell.nodeName === "TD") count += Number(cell.getAttribute("colspan")) || 1;
  }
  return count;
}

function markdownService(): TurndownService {
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    hr: "---",
  });
  service.remove(["script", "style", "noscript", "template"] as TurndownService.Filter);
  service.addRule("list-item", {
    filter: ["li"],
    replacement: (content, node) => {
      const parent = (node as AnyNode).parentNode;
      let prefix = "- ";
      if (parent?.nodeName === "OL") {
        const start = Number(parent.getAttribute("start")) || 1;
        prefix = `${start + [...parent.children].indexOf(node)}. `;
      }
      const body = content
        .replace(/^\n+/, "")
        .replace(/\n+$/, "\n")
        .replace(/\n/gm, `\n${" ".repeat(prefix.length)}`);
      return `${prefix}${body}${(node as AnyNode).nextSibling && !body.endsWith("\n") ? "\n" : ""}`;
    },
  });
  service.addRule("code-block", {
    filter: (node) => node.nodeName === "PRE",
    replacement: (_content, node) => {
      const code = (node as AnyNode).textContent.replace(/\n$/, "");
      const fence = fenceFor(code);
      return `\n\n${fence}${codeLanguage(node)}\n${code}\n${fence}\n\n`;
    },
  });
  service.addRule("table-cell", {
    filter: (node) => (node.nodeName === "TH" || node.nodeName === "TD") && isDataTable(closestTable(node)),
    replacement: (content, node) => {
      const text = content
        .replace(/\s*\n\s*/g, " ")
        .replace(/\|/g, "\\|")
        .trim();
      const first = (node as AnyNode).previousElementSibling === null;
      const span = Number((node as AnyNode).getAttribute("colspan")) || 1;
      return `${first ? "|" : ""} ${text} |${" |".repeat(span - 1)}`;
    },
  });
  service.addRule("table-row", {
    filter: (node) => node.nodeName === "TR" && isDataTable(closestTable(node)),
    replacement: (content, node) => {
      const table = closestTable(node);
      if (firstRow(table) !== node) return `\n${content}`;
      // GFM needs a header row: the first row is it, whether or not the page marked it as one.
      const separator = `|${" --- |".repeat(Math.max(1, columnCount(node)))}`;
      return `\n${content}\n${separator}`;
    },
  });
  service.addRule("table-section", {
    filter: ["thead", "tbody", "tfoot"],
    replacement: (content) => content,
  });
  service.addRule("table", {
    filter: (node) => node.nodeName === "TABLE" && isDataTable(node),
    replacement: (content, node) => {
      const caption = (node as AnyNode).querySelector("caption")?.textContent.trim();
      const rows = content
        .split("\n")
        .filter((line) => line.startsWith("|"))
        .join("\n");
      return `\n\n${caption ? `${caption}\n\n` : ""}${rows}\n\n`;
    },
  });
  service.addRule("caption", { filter: ["caption"], replacement: () => "" });
  service.addRule("link", {
    filter: (node) => node.nodeName === "A" && (node as AnyNode).getAttribute("href") !== null,
    replacement: (content, node) => {
      const href = (node as AnyNode).getAttribute("href") as string;
      const text = content.trim();
      if (text === "") return "";
      if (href.startsWith("#") || /^javascript:/i.test(href)) return text;
      const destination = href.replace(/[()]/g, (c) => encodeURIComponent(c));
      // A link around blocks (a card: a heading and a paragraph; a table) cannot be one Markdown link, whose
      // text is inline: the blocks stay as they are, and the link follows them on a line of its own.
      if (text.includes("\n") || text.startsWith("|"))
        return `\n\n${text}\n\n[${destination}](${destination})\n\n`;
      return `[${text}](${destination})`;
    },
  });
  service.addRule("image", {
    filter: ["img"],
    replacement: (_content, node) => {
      const alt = ((node as AnyNode).getAttribute("alt") ?? "").replace(/\s+/g, " ").trim();
      const src = (node as AnyNode).getAttribute("src") ?? "";
      if (src === "" || /^data:/i.test(src)) return alt;
      return `![${alt}](${src})`;
    },
  });
  return service;
}

let service: TurndownService | undefined;

/** Converts `root`, which is used up: the tree is changed in place and must not be used afterwards. */
function toMarkdown(root: AnyNode): string {
  service ??= markdownService();
  // turndown clones its input before converting it. Every tree here is converted once and dropped, so
  // the clone (a fifth of the time on a large page, in node construction alone) is skipped.
  root.cloneNode = () => root;
  return service
    .turndown(root)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function pageTitle(document: Doc): string | undefined {
  const title = document.querySelector("title")?.textContent?.replace(/\s+/g, " ").trim();
  return title || undefined;
}

/** The whole body, without page furniture (navigation, header, footer, forms, ads). */
function wholeBody(document: Doc): AnyNode {
  const body = document.body ?? document.documentElement;
  removeAll(body, FURNITURE);
  return body;
}

/** The title as a top heading, unless the content opens with one of its own. */
function withTitle(title: string | undefined, markdown: string): string {
  if (!title || markdown === "" || markdown.startsWith("# ")) return markdown;
  return `# ${title}\n\n${markdown}`;
}

/** The element a page marks as its main content: `<main>`, `role="main"`, or its one `<article>`. */
function mainElement(document: Doc): AnyNode | undefined {
  const main = document.querySelector('main, [role="main"]');
  if (main) return main;
  const articles = document.querySelectorAll("article");
  return articles.length === 1 ? articles[0] : undefined;
}

export function htmlToMarkdown(html: string, pageUrl: string): ConvertedPage {
  let document = prepare(html, pageUrl);
  const title = pageTitle(document);
  if (html.length > READABILITY_MAX_HTML_CHARS) {
    const main = mainElement(document);
    if (main) {
      removeAll(main, FURNITURE_INSIDE);
      return { title, markdown: withTitle(title, toMarkdown(main)), article: true };
    }
  } else if (isProbablyReaderable(document as unknown as ReadableDocument)) {
    const article = new Readability(document as unknown as ReadableDocument, {
      keepClasses: true,
      serializer: (el) => el,
    }).parse();
    const content = article?.content as AnyNode;
    if (content && content.textContent.trim() !== "") {
      const heading = article?.title?.trim() || title;
      return { title: heading, markdown: withTitle(heading, toMarkdown(content)), article: true };
    }
    // Readability changed the document it looked at, so the whole body comes from a fresh parse.
    document = prepare(html, pageUrl);
  }
  return { title, markdown: withTitle(title, toMarkdown(wholeBody(document))), article: false };
}
