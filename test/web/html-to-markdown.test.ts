import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { htmlToMarkdown, READABILITY_MAX_HTML_CHARS } from "../../src/web/html-to-markdown.js";

const URL_ = "https://docs.example.com/guide/page.html";
const body = (inner: string, title = "T") =>
  `<!doctype html><html><head><title>${title}</title></head><body>${inner}</body></html>`;
const md = (inner: string) => htmlToMarkdown(body(inner), URL_).markdown;

describe("HTML to Markdown", () => {
  it("makes the first row a table's header when the page marks none, and escapes pipes", () => {
    expect(md("<table><tr><td>a</td><td>b|c</td></tr><tr><td>1</td><td>2</td></tr></table>")).toContain(
      "| a | b\\|c |\n| --- | --- |\n| 1 | 2 |",
    );
  });

  it("keeps a layout table (one holding another) as blocks, the inner data table as a table", () => {
    const out = md(
      "<table><tr><td><p>Left column</p></td><td><table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>1</td></tr></table></td></tr></table>",
    );
    expect(out).toContain("Left column");
    expect(out).toContain("| k | v |\n| --- | --- |\n| x | 1 |");
    expect(out).not.toMatch(/\| Left column/);
  });

  it("fences code with a fence longer than any backtick run inside, and finds the language where sites put it", () => {
    expect(md('<pre><code class="lang-ts">const s = ```x```;</code></pre>')).toContain(
      "````ts\nconst s = ```x```;\n````",
    );
    expect(md('<pre data-lang="rust">fn main() {}</pre>')).toContain("```rust\nfn main() {}\n```");
    expect(md('<div class="highlight highlight-source-shell"><pre>ls -la</pre></div>')).toContain(
      "```shell\nls -la\n```",
    );
    expect(md('<pre class="sourceCode python"><code>x = 1</code></pre>')).toContain("```python\nx = 1\n```");
    expect(md("<pre>  indented\n    kept</pre>")).toContain("```\n  indented\n    kept\n```");
  });

  it("makes links absolute against the page (and its <base>), drops script links and data images", () => {
    expect(
      md('<p><a href="../api/">API</a> <a href="javascript:void(0)">Menu</a> <a href="#top">Top</a></p>'),
    ).toBe("# T\n\n[API](https://docs.example.com/api/) Menu Top");
    expect(
      htmlToMarkdown(body('<base href="https://cdn.example.net/"><p><a href="x">X</a></p>'), URL_).markdown,
    ).toContain("[X](https://cdn.example.net/x)");
    expect(
      md('<p><img src="data:image/png;base64,AAAA" alt="logo"> <img src="/i.png" alt="chart"></p>'),
    ).toContain("logo ![chart](https://docs.example.com/i.png)");
  });

  it("keeps the blocks of a link around blocks (a card, a table) and puts the link after them", () => {
    expect(md('<main><a href="/p"><h3>Title</h3><p>Some text.</p></a><p>After.</p></main>')).toContain(
      "### Title\n\nSome text.\n\n[https://docs.example.com/p](https://docs.example.com/p)\n\nAfter.",
    );
    // Found by the property below: a table's separator row must stay a whole line.
    for (const inner of [
      "<a href='x'><h1><table><tr>!",
      "<a href='x'><table><tr><td>a</td></tr></table></a>",
    ]) {
      const out = md(inner);
      expect(out).toContain("[https://docs.example.com/guide/x](https://docs.example.com/guide/x)");
      for (const line of out.split("\n"))
        if (line.includes("| --- |")) expect(line).toMatch(/^\|( --- \|)+$/);
    }
    expect(md('<p>See <a href="/q">the docs</a>.</p>')).toContain(
      "See [the docs](https://docs.example.com/q).",
    );
  });

  it("leaves out a search form but keeps a page wrapped whole in one (ASP.NET WebForms)", () => {
    expect(
      md('<form action="/search"><label>Search the docs</label><input name="q"></form><p>Body text.</p>'),
    ).toBe("# T\n\nBody text.");
    expect(md('<form id="aspnetForm"><h2>Reference</h2><p>The page itself.</p></form>')).toBe(
      "# T\n\n## Reference\n\nThe page itself.",
    );
  });

  it("converts a very large page's main element without Readability, leaving out what surrounds it", () => {
    const paragraph = "<p>Section text that goes on for a while, describing one more part of the manual.</p>";
    const sections = paragraph.repeat(Math.ceil(READABILITY_MAX_HTML_CHARS / paragraph.length) + 1);
    const html = body(
      `<nav>Top menu</nav><aside>Sidebar links</aside><main><header><h1>Manual</h1></header><nav>On this page</nav>${sections}<footer>Edit this page</footer></main><footer>Site footer</footer>`,
      "Manual",
    );
    const page = htmlToMarkdown(html, URL_);
    expect(page.article).toBe(true);
    expect(page.markdown.startsWith("# Manual\n\nSection text")).toBe(true);
    for (const noise of ["Top menu", "Sidebar links", "On this page", "Edit this page", "Site footer"])
      expect(page.markdown, noise).not.toContain(noise);
  });

  it("never throws on malformed markup, never lets script or style text through, and writes well-formed table separators", () => {
    const piece = fc.oneof(
      fc.constantFrom(
        "<p>",
        "</p>",
        "<table>",
        "</table>",
        "<tr>",
        "<td>",
        "</td>",
        "<th>",
        "<pre>",
        "</pre>",
        "<code>",
        "<ul>",
        "<li>",
        "<a href='x'>",
        "</a>",
        "<div class='ad'>",
        "</div>",
        "<script>",
        "</script>",
        "<!--",
        "-->",
        "<br>",
        "|",
        "`",
        "```",
        "&amp;",
        "&#0;",
        "<h1>",
        "<form>",
        "<img src=''>",
      ),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const out = htmlToMarkdown(body(pieces.join("")), URL_).markdown;
        expect(typeof out).toBe("string");
        expect(out).not.toMatch(/SCRIPTMARK|STYLEMARK/);
        for (const line of out.split("\n")) {
          if (/^\| --- \|/.test(line)) expect(line).toMatch(/^\|( --- \|)+$/);
        }
      }),
      { numRuns: 150 },
    );
  });
});
