import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { DEFAULT_PROMPT_MODEL, setPromptModel } from "../../src/web/apply-prompt.js";
import { allow, webContext } from "./helpers.js";
import { routes, serve } from "./servers.js";

const DOCS_PAGE = readFileSync(new URL("../fixtures/web/docs-page.html", import.meta.url), "utf8");

interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: Array<{ role: string; content: string }>;
}

/** A loopback stand-in for the Anthropic Messages API: answers every request with `answer`. */
async function standInModel(answer: string, status = 200) {
  const requests: Array<{ headers: Record<string, string | string[] | undefined>; body: MessagesRequest }> =
    [];
  const server = await serve((req, res, body) => {
    if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
      res.writeHead(404).end();
      return;
    }
    const parsed = JSON.parse(body) as MessagesRequest;
    requests.push({ headers: req.headers, body: parsed });
    if (status !== 200) {
      res.writeHead(status, { "content-type": "application/json" }).end(
        JSON.stringify({
          type: "error",
          error: { type: "authentication_error", message: "invalid x-api-key" },
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "msg_stand_in",
        type: "message",
        role: "assistant",
        model: parsed.model,
        content: [{ type: "text", text: answer }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1234, output_tokens: 56 },
      }),
    );
  });
  return { server, requests };
}

describe("WebFetch prompt", () => {
  it("hands the page and the prompt to a small model and returns its answer with the source", async () => {
    const site = await serve(routes({ "/docs/install": { body: DOCS_PAGE } }));
    const model = await standInModel("Run `npm install widget --save`.");
    const ctx = webContext({
      rules: allow("WebFetch(domain:127.0.0.1)"),
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.server.origin },
    });
    const result = await runTool(
      "WebFetch",
      { url: `${site.origin}/docs/install`, prompt: "How do I install the widget?" },
      ctx,
    );
    expect(result.isError).toBe(false);
    expect(ToolResult.text(result)).toBe(
      `Run \`npm install widget --save\`.\n\nSource: ${site.origin}/docs/install`,
    );
    expect(model.requests).toHaveLength(1);
    const [request] = model.requests;
    // The key travels in x-api-key or as a bearer token, depending on the SDK version.
    expect(`${request!.headers["x-api-key"]} ${request!.headers.authorization}`).toContain("test-key");
    expect(request!.body.model).toBe(DEFAULT_PROMPT_MODEL);
    const message = request!.body.messages[0]!.content;
    expect(message).toContain("npm install widget --save");
    expect(message).not.toContain("Accept all cookies");
    expect(message.trimEnd().endsWith("How do I install the widget?")).toBe(true);
    expect(result.metadata).toMatchObject({ promptApplied: true, model: DEFAULT_PROMPT_MODEL });
    expect(ctx.costTracker.byModel().get(DEFAULT_PROMPT_MODEL)).toMatchObject({
      inputTokens: 1234,
      outputTokens: 56,
    });
  });

  it("takes the model id from ANTHROPIC_DEFAULT_HAIKU_MODEL", async () => {
    const site = await serve(routes({ "/p": { body: "<p>text</p>" } }));
    const model = await standInModel("ok");
    const ctx = webContext({
      rules: allow("WebFetch(domain:127.0.0.1)"),
      env: {
        ANTHROPIC_API_KEY: "k",
        ANTHROPIC_BASE_URL: model.server.origin,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-haiku-4-5",
      },
    });
    await runTool("WebFetch", { url: `${site.origin}/p`, prompt: "what?" }, ctx);
    expect(model.requests[0]!.body.model).toBe("claude-haiku-4-5");
  });

  it("returns the content, saying the prompt was not applied, when no model is configured", async () => {
    const site = await serve(routes({ "/docs/install": { body: DOCS_PAGE } }));
    const ctx = webContext({
      rules: allow("WebFetch(domain:127.0.0.1)"),
      env: { ANTHROPIC_API_KEY: "", ANTHROPIC_AUTH_TOKEN: "" },
    });
    const result = await runTool(
      "WebFetch",
      { url: `${site.origin}/docs/install`, prompt: "How to install?" },
      ctx,
    );
    const text = ToolResult.text(result);
    expect(text).toMatch(/^Note: the prompt was not applied, because no model is configured/);
    expect(text).toContain("npm install widget --save");
    expect(result.metadata?.promptApplied).toBe(false);
  });

  it("returns the content with the model's failure when the model refuses", async () => {
    const site = await serve(routes({ "/p": { body: "<p>still here</p>" } }));
    const model = await standInModel("", 401);
    const ctx = webContext({
      rules: allow("WebFetch(domain:127.0.0.1)"),
      env: { ANTHROPIC_API_KEY: "bad", ANTHROPIC_BASE_URL: model.server.origin },
    });
    const result = await runTool("WebFetch", { url: `${site.origin}/p`, prompt: "what?" }, ctx);
    const text = ToolResult.text(result);
    expect(result.isError).toBe(false);
    expect(text).toMatch(
      /^Note: the prompt was not applied: the model \(claude-haiku-5-5 at http:\/\/127\.0\.0\.1:\d+\) failed: 401/,
    );
    expect(text).toContain("still here");
  });

  it("uses the model a host sets for the session", async () => {
    const site = await serve(routes({ "/p": { body: "<p>host model page</p>" } }));
    const ctx = webContext({ rules: allow("WebFetch(domain:127.0.0.1)"), env: { ANTHROPIC_API_KEY: "" } });
    const seen: string[] = [];
    setPromptModel(ctx, {
      description: "the host's provider",
      async apply(request) {
        seen.push(request.content);
        return { text: `answered: ${request.prompt}`, model: "host-model" };
      },
    });
    const result = await runTool("WebFetch", { url: `${site.origin}/p`, prompt: "q?" }, ctx);
    expect(ToolResult.text(result)).toBe(`answered: q?\n\nSource: ${site.origin}/p`);
    expect(seen[0]).toContain("host model page");
  });
});
