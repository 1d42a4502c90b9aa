import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { runWebFetch, type WebFetchOptions } from "../../src/web/run-webfetch.js";
import { tinyPdf } from "../fixtures/file/pdf.js";
import { tempDir } from "../helpers/context.js";
import { allow, callContext, webContext } from "./helpers.js";
import { routes, serve } from "./servers.js";

const hasOpenssl = () => spawnSync("openssl", ["version"]).status === 0;
const DOCS_PAGE = readFileSync(new URL("../fixtures/web/docs-page.html", import.meta.url), "utf8");
const NO_MODEL = { ANTHROPIC_API_KEY: "", ANTHROPIC_AUTH_TOKEN: "" };

/** A context allowed to reach the loopback test servers, with no model configured. */
function loopback(env: Record<string, string> = {}) {
  return webContext({ rules: allow("WebFetch(domain:127.0.0.1)"), env: { ...NO_MODEL, ...env } });
}

async function fetchText(url: string, prompt = "", ctx = loopback()) {
  const result = await runTool("WebFetch", { url, prompt }, ctx);
  return { result, text: ToolResult.text(result) };
}

async function direct(url: string, options: WebFetchOptions, ctx = loopback()) {
  try {
    const result = await runWebFetch({ url, prompt: "" }, callContext(ctx), options);
    return ToolResult.text(result);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe("WebFetch: pages as Markdown", () => {
  it("returns the article of a documentation page and none of its noise", async () => {
    const site = await serve(routes({ "/docs/install": { body: DOCS_PAGE } }));
    const { result, text } = await fetchText(`${site.origin}/docs/install`);
    expect(result.isError).toBe(false);
    expect(text).toContain("# Installing the widget");
    expect(text).toContain("## Install with npm");
    expect(text).toContain("```bash\nnpm install widget --save\n```");
    expect(text).toContain("```python\nimport widget\nprint(widget.version())\n```");
    expect(text).toContain("| Option | Default | Meaning |\n| --- | --- | --- |\n| `renderer` | auto |");
    expect(text).toContain("- Node.js 20.19 or later");
    expect(text).toContain("1. Read the [quick start]");
    expect(text).toContain(`[configuration guide](${site.origin}/docs/config)`);
    for (const noise of [
      "Products",
      "Pricing",
      "Sign in",
      "cookies",
      "Manage preferences",
      "Sponsored",
      "CloudHost",
      "gtag",
      "dataLayer",
      ".hero",
      "Frequently asked questions",
      "Share on Twitter",
      "newsletter",
      "Copyright",
      "Privacy",
      "tracker.example.net",
      "chat.example.net",
      "Skip to main content",
    ]) {
      expect(text, noise).not.toContain(noise);
    }
  });

  it("converts the whole body of a page without an article, leaving out navigation and footer", async () => {
    const index = `<!doctype html><html><head><title>Index of /files</title></head><body>
      <nav><a href="/">Home</a></nav><h1>Index of /files</h1>
      <ul><li><a href="a.txt">a.txt</a></li><li><a href="sub/">sub/</a></li></ul>
      <footer>Served by test</footer></body></html>`;
    const site = await serve(routes({ "/files/": { body: index } }));
    const { text } = await fetchText(`${site.origin}/files/`);
    expect(text).toContain("# Index of /files");
    expect(text).toContain(`- [a.txt](${site.origin}/files/a.txt)`);
    expect(text).not.toContain("Home");
    expect(text).not.toContain("Served by test");
  });

  it("returns JSON, plain text and Markdown as they are", async () => {
    const json = '{"name": "widget",\n  "versions": [1, 2]}';
    const site = await serve(
      routes({
        "/api": { headers: { "content-type": "application/json" }, body: json },
        "/notes.txt": {
          headers: { "content-type": "text/plain; charset=utf-8" },
          body: "line one\n  <b>two</b>\n",
        },
        "/README.md": { headers: { "content-type": "text/markdown" }, body: "# Title\n\n* item\n" },
      }),
    );
    expect((await fetchText(`${site.origin}/api`)).text).toContain(json);
    expect((await fetchText(`${site.origin}/notes.txt`)).text).toContain("line one\n  <b>two</b>\n");
    expect((await fetchText(`${site.origin}/README.md`)).text).toContain("# Title\n\n* item\n");
  });

  it("recognises an undeclared body by its first bytes", async () => {
    const site = await serve(
      routes({
        "/page": {
          headers: {},
          body: "<!DOCTYPE html><html><body><h2>Sniffed</h2><p>as HTML</p></body></html>",
        },
        "/data": { headers: { "content-type": "application/octet-stream" }, body: '{"ok": true}' },
        "/blob": { headers: { "content-type": "application/octet-stream" }, body: Buffer.from([1, 0, 2, 0]) },
      }),
    );
    expect((await fetchText(`${site.origin}/page`)).text).toContain("## Sniffed\n\nas HTML");
    expect((await fetchText(`${site.origin}/data`)).text).toContain(
      'Content-Type: application/octet-stream\n\n{"ok": true}',
    );
    const blob = await fetchText(`${site.origin}/blob`);
    expect(blob.result.isError).toBe(true);
    expect(blob.text).toMatch(/is application\/octet-stream, not a page WebFetch can read/);
  });

  it("reads a PDF as text", async () => {
    const site = await serve(
      routes({
        "/paper.pdf": {
          headers: { "content-type": "application/pdf" },
          body: tinyPdf(["Abstract here", "Results"]),
        },
      }),
    );
    const { text } = await fetchText(`${site.origin}/paper.pdf`);
    expect(text).toContain("Abstract here");
    expect(text).toContain("Results");
  });

  it("decodes gzip, br and deflate bodies", async () => {
    const page = "<html><body><p>compressed café content</p></body></html>";
    const type = "text/html; charset=utf-8";
    const site = await serve(
      routes({
        "/gz": { headers: { "content-type": type, "content-encoding": "gzip" }, body: gzipSync(page) },
        "/br": {
          headers: { "content-type": type, "content-encoding": "br" },
          body: brotliCompressSync(page),
        },
        "/deflate": {
          headers: { "content-type": type, "content-encoding": "deflate" },
          body: deflateSync(page),
        },
      }),
    );
    for (const path of ["/gz", "/br", "/deflate"]) {
      expect((await fetchText(`${site.origin}${path}`)).text, path).toContain("compressed café content");
    }
  });

  it("decodes a latin1 page by its header or by its meta tag", async () => {
    const body = (meta: string) =>
      Buffer.from(
        `<html><head>${meta}<title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e \x96 na\xefve</p></body></html>`,
        "latin1",
      );
    const site = await serve(
      routes({
        "/header": { headers: { "content-type": "text/html; charset=ISO-8859-1" }, body: body("") },
        "/meta": { headers: { "content-type": "text/html" }, body: body('<meta charset="iso-8859-1">') },
        "/undeclared": { headers: { "content-type": "text/html" }, body: body("") },
      }),
    );
    for (const path of ["/header", "/meta", "/undeclared"]) {
      const { text } = await fetchText(`${site.origin}${path}`);
      // 0x96 is an en dash in windows-1252, which browsers use for pages labelled latin1.
      expect(text, path).toContain("Crème brûlée – naïve");
      expect(text, path).toContain("# Café");
    }
  });

  it("says so when a page has no text (a page built by JavaScript)", async () => {
    const app =
      '<!doctype html><html><head><title></title><script src="/app.js"></script></head><body><div id="root"></div></body></html>';
    const site = await serve(routes({ "/app": { body: app } }));
    const { result, text } = await fetchText(`${site.origin}/app`);
    expect(result.isError).toBe(false);
    expect(text).toMatch(
      /\[The page has no text once its scripts, styles and navigation are left out; it is probably built by JavaScript/,
    );
  });

  it("refuses content types it cannot read, naming the type", async () => {
    const site = await serve(
      routes({
        "/logo.png": {
          headers: { "content-type": "image/png" },
          body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]),
        },
      }),
    );
    const { result, text } = await fetchText(`${site.origin}/logo.png`);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/image\/png, not a page WebFetch can read/);
  });
});

describe("WebFetch: redirects, statuses and failures", () => {
  it("follows a redirect chain within the host and names where it ended", async () => {
    const site = await serve(
      routes({
        "/a": { status: 301, headers: { location: "/b" }, body: "" },
        "/b": { status: 302, headers: { location: "/c?x=1" }, body: "" },
        "/c": { status: 307, headers: { location: "/final" }, body: "" },
        "/final": { body: "<html><body><p>arrived</p></body></html>" },
      }),
    );
    const { result, text } = await fetchText(`${site.origin}/a`);
    expect(result.isError).toBe(false);
    expect(text).toContain("arrived");
    expect(text).toContain(`URL: ${site.origin}/final (redirected from ${site.origin}/a)`);
    expect(site.hits).toEqual(["/a", "/b", "/c?x=1", "/final"]);
  });

  it("does not follow a redirect to another host; the result names the new URL", async () => {
    const other = await serve(routes({ "/landing": { body: "<p>other host</p>" } }));
    const site = await serve(
      routes({
        "/moved": { status: 301, headers: { location: `http://localhost:${other.port}/landing` }, body: "" },
      }),
    );
    const { result, text } = await fetchText(`${site.origin}/moved`, "summarise");
    expect(result.isError).toBe(false);
    expect(text).toContain(`redirects (HTTP 301) to another host: http://localhost:${other.port}/landing`);
    expect(text).toContain(
      `call WebFetch again with url "http://localhost:${other.port}/landing" and the same prompt`,
    );
    expect(other.hits).toEqual([]);
  });

  it("refuses a redirect to another scheme", async () => {
    const site = await serve(
      routes({ "/ftp": { status: 302, headers: { location: "ftp://127.0.0.1/file" }, body: "" } }),
    );
    const { result, text } = await fetchText(`${site.origin}/ftp`);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/redirects to ftp:\/\/127\.0\.0\.1\/file, which is not an http or https URL/);
  });

  it("stops a redirect loop after 10 redirects", async () => {
    let n = 0;
    const site = await serve((_req, res) => res.writeHead(302, { location: `/hop${++n}` }).end());
    const { result, text } = await fetchText(`${site.origin}/start`);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/redirected more than 10 times/);
    expect(site.hits).toHaveLength(11);
  });

  it("reports 404 and 500 with their reasons", async () => {
    const site = await serve(
      routes({
        "/boom": { status: 500, headers: { "content-type": "text/html" }, body: "<p>stack trace</p>" },
      }),
    );
    const missing = await fetchText(`${site.origin}/nope`);
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toMatch(/answered HTTP 404 Not Found: the page does not exist/);
    const failed = await fetchText(`${site.origin}/boom`);
    expect(failed.result.isError).toBe(true);
    expect(failed.text).toMatch(/answered HTTP 500 Internal Server Error: the server failed/);
  });

  it("times out a slow server (the time-out is injectable)", async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<html><body><p>start");
      // never ends
    });
    const text = await direct(`${site.origin}/slow`, { timeoutMs: 300 });
    expect(text).toMatch(/^error: Fetching http:\/\/127\.0\.0\.1:\d+\/slow timed out after 0\.3 s/);
  });

  it("stops at once when the caller cancels, and says it was cancelled", async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<p>start");
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const pending = runWebFetch(
      { url: `${site.origin}/slow`, prompt: "" },
      callContext(loopback(), controller.signal),
    );
    await expect(pending).rejects.toThrow(/^Fetching http:\/\/127\.0\.0\.1:\d+\/slow was cancelled\.$/);
  });

  it("stops reading an endless body at 10 MB", async () => {
    const chunk = Buffer.alloc(64 * 1024, "a");
    let written = 0;
    const site = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const pump = () => {
        while (written < 200 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once("drain", pump);
      };
      res.on("close", () => res.removeAllListeners("drain"));
      pump();
    });
    const { result, text } = await fetchText(`${site.origin}/endless`);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/larger than 10 MB, the most WebFetch reads/);
    expect(written).toBeLessThan(100 * 1024 * 1024);
  });

  it("counts the cap after decompression, so a small gzip bomb stops at 10 MB", async () => {
    const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const site = await serve(
      routes({
        "/bomb": { headers: { "content-type": "text/plain", "content-encoding": "gzip" }, body: bomb },
      }),
    );
    const { result, text } = await fetchText(`${site.origin}/bomb`);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/larger than 10 MB/);
  });

  it("refuses a declared length over the cap before reading the body", async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(50 * 1024 * 1024) });
      res.write("x");
    });
    const { text } = await fetchText(`${site.origin}/huge`);
    expect(text).toMatch(/larger than 10 MB/);
  });

  it("explains a port the Fetch standard blocks", async () => {
    const { result, text } = await fetchText("http://127.0.0.1:6000/");
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^Port 6000 is one the Fetch standard blocks/);
  });

  it("names a refused connection, a DNS failure and a TLS failure", async () => {
    const closed = await serve(() => {});
    const port = closed.port;
    await new Promise<void>((resolve) => closed.server.close(() => resolve()));
    expect((await fetchText(`http://127.0.0.1:${port}/`)).text).toMatch(
      /Connection refused by 127\.0\.0\.1:\d+/,
    );

    const notFound = Object.assign(new Error("getaddrinfo ENOTFOUND docs.invalid"), { code: "ENOTFOUND" });
    const dns = await direct("https://docs.invalid/page", {
      resolve: async () => {
        throw notFound;
      },
    });
    expect(dns).toMatch(/DNS lookup failed: the host docs\.invalid was not found/);

    // Plain HTTP where TLS is expected fails the handshake.
    const plain = await serve(routes({ "/": { body: "<p>plain</p>" } }));
    const tls = await direct(
      `https://tls.test:${plain.port}/`,
      { resolve: async () => [{ address: "127.0.0.1", family: 4 }] },
      webContext({ rules: allow("WebFetch(domain:tls.test)") }),
    );
    expect(tls).toMatch(/TLS \(https\) connection to tls\.test:\d+ failed/);
  });
});

describe("WebFetch over TLS", () => {
  it.runIf(hasOpenssl())("refuses a self-signed certificate and says why", async () => {
    const dir = tempDir();
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=selfsigned.test",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    const server = createHttpsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (_req, res) => res.end("secret"),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const text = await direct(
        `https://selfsigned.test:${port}/`,
        { resolve: async () => [{ address: "127.0.0.1", family: 4 }] },
        webContext({ rules: allow("WebFetch(domain:selfsigned.test)") }),
      );
      expect(text).toMatch(
        /TLS \(https\) connection to selfsigned\.test:\d+ failed: self[- ]signed certificate.*DEPTH_ZERO_SELF_SIGNED_CERT/,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("WebFetch: long pages, cache, GitHub", () => {
  it("caps a long page at 100,000 characters and saves the whole page for Read", async () => {
    const paragraphs = Array.from(
      { length: 3000 },
      (_, i) => `<p>Paragraph ${i} of the long page, with some words.</p>`,
    );
    const site = await serve(
      routes({ "/long": { body: `<html><body>${paragraphs.join("\n")}</body></html>` } }),
    );
    const ctx = loopback();
    const { result, text } = await fetchText(`${site.origin}/long`, "", ctx);
    expect(result.isError).toBe(false);
    expect(text.length).toBeLessThan(102_000);
    expect(text).toContain("Paragraph 0 of");
    expect(text).not.toContain("Paragraph 2999 of");
    const saved = result.metadata?.savedTo as string;
    const note =
      /this shows the first \d+ \(lines 1-(\d+)\)\. The whole page is saved as Markdown in (\S+): Read it with offset (\d+)/.exec(
        text,
      );
    expect(note?.[2]).toBe(saved);
    expect(readFileSync(saved, "utf8")).toContain("Paragraph 2999 of");
    const rest = await runTool("Read", { file_path: saved, offset: Number(note?.[3]), limit: 5 }, ctx);
    const firstUnseen = /Paragraph (\d+) of/.exec(ToolResult.text(rest))?.[1];
    const lastSeen = [...text.matchAll(/Paragraph (\d+) of/g)].at(-1)?.[1];
    expect(Number(firstUnseen)).toBe(Number(lastSeen) + 1);
  });

  it("serves a page again from the session's cache", async () => {
    const site = await serve(routes({ "/cached": { body: "<p>cache me</p>" } }));
    const ctx = loopback();
    const first = await fetchText(`${site.origin}/cached`, "", ctx);
    const second = await fetchText(`${site.origin}/cached`, "another question", ctx);
    expect(second.text).toContain("cache me");
    expect(first.result.metadata?.cached).toBe(false);
    expect(second.result.metadata?.cached).toBe(true);
    expect(site.hits).toEqual(["/cached"]);
    // Another session fetches for itself.
    await fetchText(`${site.origin}/cached`, "", loopback());
    expect(site.hits).toEqual(["/cached", "/cached"]);
  });
});
