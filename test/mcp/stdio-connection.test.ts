import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { serverIdentity } from "../../src/mcp/identity.js";
import { type OpeningData, StdioConnection } from "../../src/mcp/stdio-connection.js";
import { allTools, toMcpTools } from "../../src/registry.js";
import { CLI } from "../e2e/cli.js";
import { tempDir } from "../helpers/context.js";

const opening: OpeningData = {
  protocolVersions: ["2025-06-18"],
  capabilities: { tools: { listChanged: true } },
  serverInfo: { name: "cc-tools", version: "9.9.9" },
  instructions: "hello",
  tools: [{ name: "Read" }],
};

function harness(data: OpeningData | undefined = opening) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: unknown[] = [];
  let pending = "";
  output.on("data", (d: Buffer) => {
    pending += d.toString();
    const parts = pending.split("\n");
    pending = parts.pop()!;
    for (const p of parts) lines.push(JSON.parse(p));
  });
  const connection = new StdioConnection(input, output, data);
  const send = (m: unknown) => input.write(`${typeof m === "string" ? m : JSON.stringify(m)}\n`);
  const tick = () => new Promise((r) => setImmediate(r));
  return { connection, send, lines, tick, input };
}

const initialize = (id: number, protocolVersion = "2025-06-18") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

describe("StdioConnection", () => {
  it("answers initialize and tools/list before the server attaches, then replays the rest to it", async () => {
    const { connection, send, lines, tick } = harness();
    let needed = false;
    void connection.needsServer.then(() => (needed = true));
    send(initialize(1));
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await tick();
    expect(lines).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: opening.capabilities,
          serverInfo: opening.serverInfo,
          instructions: "hello",
        },
      },
    ]);
    expect(needed).toBe(false);
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "Read" } });
    await tick();
    expect(lines[1]).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "Read" }] } });
    expect(needed).toBe(true);

    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    expect(seen.map((m) => (m as { method: string }).method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/call",
    ]);
    // The server's own answer to the replayed initialize is dropped; its other messages pass.
    await connection.send({
      jsonrpc: "2.0",
      id: 1,
      result: lines[0] && (lines[0] as { result: unknown }).result,
    });
    await connection.send({ jsonrpc: "2.0", id: 3, result: { content: [] } });
    await tick();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [] } });
    send({ jsonrpc: "2.0", id: 4, method: "ping" });
    await tick();
    expect(seen.at(-1)).toEqual({ jsonrpc: "2.0", id: 4, method: "ping" });
  });

  it("leaves to the server an initialize with a version it cannot answer for, and paged tools/list", async () => {
    const { connection, send, lines, tick } = harness();
    send(initialize(1, "2099-01-01"));
    await connection.needsServer;
    await tick();
    expect(lines).toEqual([]);
    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    expect(seen).toHaveLength(1);
  });

  it("answers a line that is not JSON with a parse error and keeps going", async () => {
    const { connection, send, lines, tick } = harness(undefined);
    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    send("{oops");
    send("[1]");
    send({ jsonrpc: "2.0", id: 7, method: "ping" });
    await tick();
    expect(lines).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: a line was not JSON." } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: not an object." } },
    ]);
    expect(seen).toEqual([{ jsonrpc: "2.0", id: 7, method: "ping" }]);
  });

  it("closes when its input ends", async () => {
    const { connection, input } = harness(undefined);
    let closed = false;
    connection.onclose = () => {
      closed = true;
    };
    await connection.start();
    input.end();
    await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
  });
});

describe("the built opening", () => {
  const built = JSON.parse(
    readFileSync(new URL("../../dist/bin/mcp-opening.json", import.meta.url), "utf8"),
  ) as OpeningData;

  it("matches the tools, identity and protocol versions the server itself has", () => {
    expect(built.tools).toEqual(JSON.parse(JSON.stringify(toMcpTools(allTools()))));
    const { capabilities, serverInfo, instructions } = serverIdentity();
    expect({ capabilities, serverInfo, instructions }).toEqual({
      capabilities: built.capabilities,
      serverInfo: built.serverInfo,
      instructions: built.instructions,
    });
    expect(built.protocolVersions).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });

  it("answers initialize exactly as the SDK server does, for every protocol version", async () => {
    const dir = tempDir();
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir], { stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.stdin.write(`${JSON.stringify(initialize(1, version))}\n`);
      // A ping forces the SDK server to load and answer the replayed initialize, which is compared.
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })}\n`);
      await new Promise<void>((resolve) => {
        child.stdout.on("data", () => {
          if (stdout.includes('"id":2')) resolve();
        });
      });
      child.stdin.end();
      await new Promise((r) => child.on("close", r));
      const first = JSON.parse(stdout.split("\n")[0]!);
      expect(first.result.protocolVersion, version).toBe(version);
      expect(stderr, version).not.toContain("answered initialize differently");
    }
  });
});
