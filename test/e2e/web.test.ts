import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { routes, serve } from "../web/servers.js";
import { CLI } from "./cli.js";

/** The web tools through the built CLI: `cc-tools mcp` driven by the SDK's client, and `cc-tools run`. */

const run = promisify(execFile);

const clients: Client[] = [];
afterEach(async () => {
  while (clients.length > 0) await clients.pop()!.close();
});

async function serveMcp(extraArgs: string[]) {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  const client = new Client({ name: "e2e-web", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--cwd", dir, ...extraArgs],
      env: {
        ...(process.env as Record<string, string>),
        CLAUDE_CONFIG_DIR: home,
        CC_TOOLS_STATE_DIR: join(home, "state"),
        CC_TOOLS_LOG: "silent",
        ANTHROPIC_API_KEY: "",
      },
      stderr: "ignore",
    }),
  );
  clients.push(client);
  return client;
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

describe("WebFetch over MCP (built CLI)", () => {
  it("fetches a loopback page with --allow 'WebFetch(domain:127.0.0.1)' and is denied without it", async () => {
    const page = `<!doctype html><html><head><title>Loopback docs</title></head><body>
      <nav>Site menu</nav><article><h1>Loopback docs</h1>
      <p>This page is served on 127.0.0.1 for the end-to-end test of WebFetch over MCP, with enough text to be an article.</p>
      <pre><code class="language-sh">cc-tools mcp --allow 'WebFetch(domain:127.0.0.1)'</code></pre></article></body></html>`;
    const site = await serve(routes({ "/docs": { body: page } }));
    const url = `${site.origin}/docs`;

    const allowed = await serveMcp(["--allow", "WebFetch(domain:127.0.0.1)"]);
    const ok = await allowed.callTool({ name: "WebFetch", arguments: { url, prompt: "what is this?" } });
    expect(ok.isError).toBeFalsy();
    expect(text(ok)).toContain("# Loopback docs");
    expect(text(ok)).toContain("```sh\ncc-tools mcp --allow 'WebFetch(domain:127.0.0.1)'\n```");
    expect(text(ok)).toContain("the prompt was not applied");
    expect(text(ok)).not.toContain("Site menu");
    expect(site.hits).toEqual(["/docs"]);

    const plain = await serveMcp([]);
    const denied = await plain.callTool({ name: "WebFetch", arguments: { url, prompt: "what is this?" } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain("WebFetch(domain:127.0.0.1)");
    expect(site.hits).toEqual(["/docs"]);

    // Even where every call is allowed, a loopback address needs a rule naming its host.
    const bypass = await serveMcp(["--permission-mode", "bypassPermissions"]);
    const refused = await bypass.callTool({ name: "WebFetch", arguments: { url, prompt: "" } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(site.hits).toEqual(["/docs"]);
  });
});

describe("WebFetch and WebSearch with cc-tools run (built CLI)", () => {
  // Asynchronous: the servers answering the CLI run in this process.
  async function cli(args: string[], env: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, "run", ...args], {
        env: {
          ...process.env,
          CC_TOOLS_LOG: "silent",
          ANTHROPIC_API_KEY: "",
          BRAVE_SEARCH_API_KEY: "",
          ...env,
        },
        cwd: tempDir(),
      });
      return { code: 0, out: stdout + stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, out: failed.stdout + failed.stderr };
    }
  }

  it("fetches a page with a domain rule and refuses it without one", async () => {
    const site = await serve(
      routes({ "/p": { body: "<html><body><h1>Hello</h1><p>From the CLI.</p></body></html>" } }),
    );
    const input = JSON.stringify({ url: `${site.origin}/p`, prompt: "" });
    const ok = await cli(["WebFetch", input, "--allow", "WebFetch(domain:127.0.0.1)"]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("# Hello\n\nFrom the CLI.");
    const denied = await cli(["WebFetch", input]);
    expect(denied.code).toBe(1);
    expect(denied.out).toContain("--allow 'WebFetch(domain:127.0.0.1)'");
    expect(site.hits).toEqual(["/p"]);
  });

  it("searches through a DuckDuckGo base URL from the environment", async () => {
    const page = `<html><body><div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fdoc">Doc title</a>
      <a class="result__snippet">A snippet.</a></div></body></html>`;
    const ddg = await serve(routes({ "/html/": { body: page } }));
    const result = await cli(["WebSearch", JSON.stringify({ query: "doc" }), "--allow", "WebSearch"], {
      CC_TOOLS_DUCKDUCKGO_URL: ddg.origin,
    });
    expect(result.code).toBe(0);
    expect(result.out).toContain("1. Doc title\n   https://example.org/doc\n   A snippet.");
  });
});
