import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { serveToolsOverHttp } from "../../src/mcp/serve-http.js";
import { INPUT_END_DRAIN_MS } from "../../src/mcp/stdio-connection.js";
import { CLI } from "../e2e/cli.js";
import { tempDir } from "../helpers/context.js";

/**
 * F3 of issue 11: every malformed request gets the JSON-RPC error the spec names, whether it arrives while
 * the build-time opening answers (before the SDK loads) or after the SDK took over; none is left
 * unanswered, so closing stdin does not wait out the drain time for them.
 */

const initialize = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

/** Each bad frame, the id its answer must carry, and the code. */
const BAD: Array<{ name: string; frame: Record<string, unknown>; id: string | null; code: number }> = [
  { name: "jsonrpc 1.0", frame: { jsonrpc: "1.0", id: "a", method: "tools/list" }, id: "a", code: -32600 },
  { name: "jsonrpc 3.0", frame: { jsonrpc: "3.0", id: "b", method: "tools/list" }, id: "b", code: -32600 },
  { name: "jsonrpc missing", frame: { id: "c", method: "tools/list" }, id: "c", code: -32600 },
  { name: "numeric method", frame: { jsonrpc: "2.0", id: "d", method: 42 }, id: "d", code: -32600 },
  {
    name: "array params",
    frame: { jsonrpc: "2.0", id: "e", method: "tools/call", params: ["Read", {}] },
    id: "e",
    code: -32602,
  },
  {
    name: "object id",
    frame: { jsonrpc: "2.0", id: { x: 1 }, method: "tools/list" },
    id: null,
    code: -32600,
  },
  { name: "fractional id", frame: { jsonrpc: "2.0", id: 1.5, method: "tools/list" }, id: null, code: -32600 },
  {
    name: "a request that is also a response",
    frame: { jsonrpc: "2.0", id: "h", method: "tools/list", result: {} },
    id: "h",
    code: -32600,
  },
  {
    name: "array _meta",
    frame: { jsonrpc: "2.0", id: "f", method: "tools/call", params: { name: "Glob", _meta: [] } },
    id: "f",
    code: -32602,
  },
  {
    name: "fractional progress token",
    frame: {
      jsonrpc: "2.0",
      id: "g",
      method: "tools/call",
      params: { name: "Glob", arguments: { pattern: "*" }, _meta: { progressToken: 1.5 } },
    },
    id: "g",
    code: -32602,
  },
];

function startServer() {
  const child = spawn(process.execPath, [CLI, "mcp", "--cwd", tempDir()], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, CC_TOOLS_LOG: "silent" },
  });
  const answers: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    answers.push(JSON.parse(line));
    for (const w of waiters.splice(0)) w();
  });
  const send = (frame: unknown) => child.stdin!.write(`${JSON.stringify(frame)}\n`);
  const answersUntil = async (count: number) => {
    while (answers.length < count) await new Promise<void>((r) => waiters.push(r));
    return answers.slice(0, count);
  };
  const exited = new Promise<number | null>((r) => child.on("close", r));
  return { child, send, answersUntil, exited };
}

function check(answers: Array<Record<string, unknown>>) {
  for (const bad of BAD) {
    const answer = answers.find(
      (a) =>
        (a.error as { message?: string } | undefined)?.message?.length &&
        a.id === bad.id &&
        (a.error as { code: number }).code === bad.code,
    );
    expect(answer, bad.name).toBeDefined();
  }
  expect(answers.filter((a) => "result" in a).map((a) => a.id)).toEqual(["init", "ok"]);
}

describe("malformed JSON-RPC over stdio", () => {
  it("answers each with its error during the opening, before the SDK has loaded", async () => {
    const server = startServer();
    server.send(initialize);
    for (const bad of BAD) server.send(bad.frame);
    server.send({ jsonrpc: "2.0", id: "ok", method: "tools/list" });
    const answers = await server.answersUntil(BAD.length + 2);
    check(answers);
    // A tools/list with jsonrpc 1.0 got an error, not the build-time tool list.
    expect(answers.find((a) => a.id === "a")).not.toHaveProperty("result");
    const closedAt = performance.now();
    server.child.stdin!.end();
    expect(await server.exited).toBe(0);
    expect(performance.now() - closedAt).toBeLessThan(INPUT_END_DRAIN_MS);
  });

  it("answers each with its error after the SDK took over, and closes without waiting the drain", async () => {
    const server = startServer();
    server.send(initialize);
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    server.send({ jsonrpc: "2.0", id: "ok", method: "tools/list" });
    await server.answersUntil(2);
    // A call to a tool goes to the SDK: once answered, the server is surely attached.
    server.send({
      jsonrpc: "2.0",
      id: "attached",
      method: "tools/call",
      params: { name: "Glob", arguments: { pattern: "*" } },
    });
    await server.answersUntil(3);
    for (const bad of BAD) server.send(bad.frame);
    const answers = await server.answersUntil(BAD.length + 3);
    check(answers.filter((a) => a.id !== "attached"));
    const closedAt = performance.now();
    server.child.stdin!.end();
    expect(await server.exited).toBe(0);
    expect(performance.now() - closedAt).toBeLessThan(INPUT_END_DRAIN_MS);
  });
});

/** Frames a fuzzer sends: arbitrary JSON, near-misses of a request, and lines that are not JSON at all. */
const fuzzFrame = fc.oneof(
  fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc
    .record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.anything({ maxDepth: 1 })),
        id: fc.oneof(fc.integer(), fc.string(), fc.double(), fc.anything({ maxDepth: 1 })),
        method: fc.oneof(
          fc.constantFrom("tools/list", "tools/call", "ping", "initialize"),
          fc.anything({ maxDepth: 1 }),
        ),
        params: fc.anything({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    )
    .map((m) => JSON.stringify(m)),
  fc.string({ unit: "binary" }).map((s) => s.replaceAll("\n", " ")),
);

describe("fuzzed frames over stdio", () => {
  it("never stop the server from answering the next good request", async () => {
    const server = startServer();
    server.send(initialize);
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    let answered = 1;
    await server.answersUntil(answered);
    let probe = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fuzzFrame, { maxLength: 8 }), async (frames) => {
        for (const frame of frames) server.child.stdin!.write(`${frame}\n`);
        const id = `probe-${++probe}`;
        server.send({ jsonrpc: "2.0", id, method: "ping" });
        // Everything sent before the probe is answered or dropped by then: answers come in order of handling.
        for (;;) {
          const answers = await server.answersUntil(++answered);
          if (answers.at(-1)!.id === id) break;
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 25), seed: Number(process.env.FUZZ_SEED ?? 20261101) },
    );
    server.child.stdin!.end();
    expect(await server.exited).toBe(0);
  }, 120_000);
});

describe("malformed JSON-RPC over HTTP", () => {
  it("answers each with status 400 and its error, before and after a session exists", async () => {
    const dir = tempDir();
    const served = await serveToolsOverHttp(
      (session, host) => createToolContext({ workingDir: dir, session, host }),
      undefined,
      { host: "127.0.0.1", port: 0 },
    );
    try {
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      };
      const post = (body: unknown, extra: Record<string, string> = {}) =>
        fetch(served.url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
      const init = await post(initialize);
      await init.text();
      const session = { "mcp-session-id": init.headers.get("mcp-session-id")! };
      for (const extra of [{}, session]) {
        for (const bad of BAD) {
          const response = await post(bad.frame, extra);
          expect(response.status, bad.name).toBe(400);
          const answer = (await response.json()) as { id: unknown; error: { code: number } };
          expect({ name: bad.name, id: answer.id, code: answer.error.code }).toEqual({
            name: bad.name,
            id: bad.id,
            code: bad.code,
          });
        }
      }
    } finally {
      await served.close();
    }
  });
});
