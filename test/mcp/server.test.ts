import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { PostOffice } from "../../src/mcp/post-office.js";
import { serveToolsOverHttp } from "../../src/mcp/serve-http.js";
import {
  type ContextFactory,
  createToolSession,
  MAX_ARGUMENT_CHARS,
  mcpHost,
  type ToolSessionOptions,
} from "../../src/mcp/server.js";
import { allTools, builtinTools } from "../../src/registry.js";
import { PROGRESS_EVERY_FILES } from "../../src/search/query.js";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "./fixtures.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function factory(
  workingDir: string,
  permissionMode: "default" | "bypassPermissions" = "bypassPermissions",
): ContextFactory {
  return (session, host) => createToolContext({ workingDir, session, host, permissionMode });
}

type Elicit = (message: string) => {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean>;
};

/** A real SDK client wired to one server session in memory. */
async function connect(makeContext: ContextFactory, elicit?: Elicit, options?: ToolSessionOptions) {
  const session = createToolSession(makeContext, undefined, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await session.server.connect(serverSide);
  const client = new Client(
    { name: "test", version: "1" },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) client.setRequestHandler("elicitation/create", (request) => elicit(request.params.message));
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await session.dispose();
  });
  return { client, session };
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ type: string; text?: string }>).map((b) => b.text ?? "").join("\n");

describe("MCP server session", () => {
  it("lists every tool it can serve with its JSON Schema; the others are left out", async () => {
    const { client } = await connect(factory(tempDir()));
    const { tools } = await client.listTools();
    const { available } = builtinTools().availableFor(mcpHost(() => false));
    expect(tools.map((t) => t.name)).toEqual(available.names());
    // Nobody to ask (no elicitation), no other session, no prompt runner.
    for (const absent of ["AskUserQuestion", "SendMessage", "CronCreate"])
      expect(tools.map((t) => t.name)).not.toContain(absent);
    // TaskStop needs no permission, but it kills processes: it is not announced as read-only.
    expect(tools.find((t) => t.name === "TaskStop")!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    expect(tools.find((t) => t.name === "TaskOutput")!.annotations).toMatchObject({ readOnlyHint: true });
    for (const tool of tools) {
      expect(tool.inputSchema).toEqual(
        allTools()
          .find((t) => t.name === tool.name)!
          .toDefinition().input_schema,
      );
    }
  });

  it("returns errors as isError results: unknown tools, bad input, huge arguments", async () => {
    const { client } = await connect(factory(tempDir()));
    const unknown = await client.callTool({ name: "Nope", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain('No tool named "Nope"');
    const invalid = await client.callTool({ name: "ReadMcpResource", arguments: { server: 1 } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain("server");
    const huge = await client.callTool({
      name: "Bash",
      arguments: { command: "x".repeat(MAX_ARGUMENT_CHARS + 1) },
    });
    expect(huge.isError).toBe(true);
    expect(text(huge)).toContain("16 MiB) an MCP call may carry, so nothing was run. Split the work");
  });

  it("keeps session state (the shell's cwd) across calls of one connection, not between connections", async () => {
    const dir = tempDir();
    const a = await connect(factory(dir));
    const b = await connect(factory(dir));
    const mk = await a.client.callTool({ name: "Bash", arguments: { command: "mkdir -p sub && cd sub" } });
    expect(mk.isError).toBeFalsy();
    expect(text(await a.client.callTool({ name: "Bash", arguments: { command: "pwd" } }))).toContain(
      join(dir, "sub"),
    );
    expect(text(await b.client.callTool({ name: "Bash", arguments: { command: "pwd" } })).trim()).toBe(dir);
  });

  it("sends progress while a long call runs, and cancellation kills its processes", async () => {
    const { client } = await connect(factory(tempDir()));
    const marker = `sleep 31.${process.pid}`;
    const controller = new AbortController();
    const progress: number[] = [];
    const call = client.callTool(
      { name: "Bash", arguments: { command: marker } },
      { signal: controller.signal, onprogress: (p) => progress.push(p.progress) },
    );
    expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
    controller.abort("test cancels");
    await expect(call).rejects.toThrow();
    expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
  });

  it("forwards a tool's own progress (Grep over a big tree) as increasing progress notifications", async () => {
    const dir = tempDir();
    for (let d = 0; d < 25; d++) {
      mkdirSync(join(dir, `d${d}`));
      for (let f = 0; f < (PROGRESS_EVERY_FILES * 2.5) / 25; f++) {
        writeFileSync(join(dir, `d${d}`, `f${f}.txt`), "needle\n");
      }
    }
    const { client } = await connect(factory(dir));
    const updates: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "Grep", arguments: { pattern: "needle" } },
      { onprogress: (p) => updates.push(p) },
    );
    expect(result.isError).toBeFalsy();
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates[0]!.message).toMatch(/files with matches so far/);
    const values = updates.map((u) => u.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
  });

  it("sends a heartbeat while a call with a progress token is quiet", async () => {
    const { client } = await connect(factory(tempDir()), undefined, { heartbeatMs: 100 });
    const updates: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "Bash", arguments: { command: "sleep 1; echo done" } },
      { onprogress: (p) => updates.push(p) },
    );
    expect(text(result)).toContain("done");
    const beats = updates.filter((u) => /still running/.test(u.message ?? ""));
    expect(beats.length).toBeGreaterThan(0);
    const values = updates.map((u) => u.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
  });

  it("asks through elicitation when the client supports it", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "hi\n");
    const asked: string[] = [];
    const answers = ["Deny", "Allow once"];
    const { client } = await connect(factory(dir, "default"), (message) => {
      asked.push(message);
      return { action: "accept", content: { decision: answers.shift() ?? "deny" } };
    });
    // Write asks in default mode (a Bash command would run in the OS sandbox without asking).
    const denied = await client.callTool({
      name: "Write",
      arguments: { file_path: "one.txt", content: "1" },
    });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain("denied");
    const allowed = await client.callTool({
      name: "Write",
      arguments: { file_path: "two.txt", content: "2" },
    });
    expect(allowed.isError).toBeFalsy();
    expect(readFileSync(join(dir, "two.txt"), "utf8")).toBe("2");
    expect(asked).toHaveLength(2);
    expect(asked[0]).toContain("Write");
  });

  it("without elicitation, refuses with the rule that would allow the call", async () => {
    const { client } = await connect(factory(tempDir(), "default"));
    const denied = await client.callTool({ name: "Write", arguments: { file_path: "x.txt", content: "x" } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/Ask the user to allow `Edit\(\/\/.*x\.txt\)`/);
  });
});

describe("MCP server over Streamable HTTP", () => {
  it("requires the bearer token and gives each HTTP session its own state", async () => {
    const dir = tempDir();
    const served = await serveToolsOverHttp(factory(dir), undefined, {
      host: "127.0.0.1",
      port: 0,
      token: "s3cret",
    });
    cleanups.push(() => served.close());

    const unauthorized = await fetch(served.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(unauthorized.status).toBe(401);

    const open = async () => {
      const client = new Client({ name: "http-test", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: "Bearer s3cret" } },
        }),
      );
      cleanups.push(() => client.close());
      return client;
    };
    const one = await open();
    const two = await open();
    // HTTP sessions of one server can message each other, so SendMessage is offered.
    const offered = builtinTools().availableFor(mcpHost(() => false, new PostOffice())).available;
    expect((await one.listTools()).tools.map((t) => t.name)).toEqual(offered.names());
    await one.callTool({ name: "Bash", arguments: { command: "mkdir -p deeper && cd deeper" } });
    expect(text(await one.callTool({ name: "Bash", arguments: { command: "pwd" } }))).toContain("deeper");
    expect(text(await two.callTool({ name: "Bash", arguments: { command: "pwd" } })).trim()).toBe(dir);
  });
});

describe("MCP server over Streamable HTTP: cancellation", () => {
  it("a client's notifications/cancelled kills the call's processes and the session goes on", async () => {
    const served = await serveToolsOverHttp(factory(tempDir()), undefined, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => served.close());
    const client = new Client({ name: "http-cancel", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    cleanups.push(() => client.close());
    const marker = `sleep 34.${process.pid}`;
    const controller = new AbortController();
    const call = client.callTool(
      { name: "Bash", arguments: { command: marker } },
      { signal: controller.signal },
    );
    expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
    controller.abort("the user pressed stop");
    await expect(call).rejects.toThrow();
    expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
    expect(text(await client.callTool({ name: "Bash", arguments: { command: "echo after" } }))).toContain(
      "after",
    );
  });
});

describe("MCP server over Streamable HTTP: broken clients", () => {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  };
  const post = (url: string, body: string, extra: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(url, { method: "POST", headers: { ...headers, ...extra }, body, signal });

  async function rawSession(url: string) {
    const init = await post(
      url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    );
    await init.text();
    const id = init.headers.get("mcp-session-id")!;
    await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {
      "mcp-session-id": id,
    });
    return id;
  }
  const bashCall = (id: number, command: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "Bash", arguments: { command, ...extra } },
    });

  it("answers a body that is not JSON with a JSON-RPC parse error and keeps serving", async () => {
    const served = await serveToolsOverHttp(factory(tempDir()), undefined, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => served.close());
    const bad = await post(served.url, "{oops");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const session = await rawSession(served.url);
    const ok = await post(served.url, bashCall(2, "echo still-here"), { "mcp-session-id": session });
    expect(await ok.text()).toContain("still-here");
  });

  it("kills a call's processes when the client drops the answer's stream", async () => {
    const served = await serveToolsOverHttp(factory(tempDir()), undefined, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => served.close());
    const session = await rawSession(served.url);
    const marker = `sleep 32.${process.pid}`;
    const controller = new AbortController();
    const call = post(served.url, bashCall(2, marker), { "mcp-session-id": session }, controller.signal);
    expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
    controller.abort();
    await call.then((r) => r.text()).catch(() => {});
    expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
    const next = await post(served.url, bashCall(3, "echo next"), { "mcp-session-id": session });
    expect(await next.text()).toContain("next");
  });

  it("closes a session with background jobs once idle for the shorter limit, killing its jobs", async () => {
    const served = await serveToolsOverHttp(factory(tempDir()), undefined, {
      host: "127.0.0.1",
      port: 0,
      sessionIdleMs: 60_000,
      // Long enough that the job is seen running under load before the sweep closes the session.
      sessionWithJobsIdleMs: 1_500,
    });
    cleanups.push(() => served.close());
    const session = await rawSession(served.url);
    const marker = `sleep 33.${process.pid}`;
    const started = await post(served.url, bashCall(2, marker, { run_in_background: true }), {
      "mcp-session-id": session,
    });
    expect(await started.text()).not.toContain('"isError":true');
    expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
    expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
    const gone = await post(served.url, bashCall(3, "echo late"), { "mcp-session-id": session });
    expect(gone.status).toBe(404);
  });
});
