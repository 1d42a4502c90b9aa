import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { serverIdentity } from "../../src/mcp/identity.js";
import {
  INPUT_END_DRAIN_MS,
  MAX_FRAME_BYTES,
  type OpeningData,
  oversizedFrameId,
  StdioConnection,
} from "../../src/mcp/stdio-connection.js";
import { builtinTools, toMcpTools } from "../../src/registry.js";
import { CLI } from "../e2e/cli.js";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "./fixtures.js";

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

const modernOpening: OpeningData = {
  ...opening,
  tools: [{ name: "Read" }, { name: "AskUserQuestion" }],
  requires: { AskUserQuestion: ["questions"] },
  modern: {
    discover: { supportedVersions: ["2026-07-28"], resultType: "complete" },
    listStamp: { resultType: "complete", ttlMs: 0 },
  },
};

/** A 2026-07-28 request's envelope. */
const envelope = (version = "2026-07-28") => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
});

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

  it("lists the tools that ask the user only to a client that said it supports elicitation", async () => {
    const data = {
      ...opening,
      tools: [{ name: "Read" }, { name: "AskUserQuestion" }, { name: "SendMessage" }],
      requires: { AskUserQuestion: ["questions"], SendMessage: ["messages"] },
    };
    for (const [capabilities, names] of [
      [{}, ["Read"]],
      [{ elicitation: { form: {} } }, ["Read", "AskUserQuestion"]],
    ] as const) {
      const { send, lines, tick } = harness(data);
      send({ ...initialize(1), params: { ...initialize(1).params, capabilities } });
      send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      await tick();
      expect(
        (lines[1] as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name),
      ).toEqual(names);
    }
  });

  it("answers a 2026-07-28 client's server/discover and tools/list, and replays only the discover", async () => {
    const { connection, send, lines, tick } = harness(modernOpening);
    send({ jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: envelope() } });
    send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } });
    await tick();
    // The envelope says the client elicits: AskUserQuestion is offered.
    expect(lines).toEqual([
      { jsonrpc: "2.0", id: "d", result: { supportedVersions: ["2026-07-28"], resultType: "complete" } },
      {
        jsonrpc: "2.0",
        id: 1,
        result: { tools: [{ name: "Read" }, { name: "AskUserQuestion" }], resultType: "complete", ttlMs: 0 },
      },
    ]);
    expect(await connection.needsServer).toBe(true);
    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    expect(seen.map((m) => (m as { method: string }).method)).toEqual(["server/discover"]);
    // The server's own answer to the replayed discover is dropped.
    await connection.send({
      jsonrpc: "2.0",
      id: "d",
      result: { supportedVersions: ["2026-07-28"], resultType: "complete" },
    });
    expect(lines).toHaveLength(2);
  });

  it("leaves AskUserQuestion out for a 2026-07-28 client whose envelope does not say it elicits", async () => {
    const { send, lines, tick } = harness(modernOpening);
    const mute = { ...envelope(), "io.modelcontextprotocol/clientCapabilities": {} };
    send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: mute } });
    await tick();
    expect(lines).toEqual([
      { jsonrpc: "2.0", id: 1, result: { tools: [{ name: "Read" }], resultType: "complete", ttlMs: 0 } },
    ]);
  });

  it("leaves to the server an initialize that carries a 2026-07-28 envelope or follows such a request", async () => {
    for (const messages of [
      [{ ...initialize(1), params: { ...initialize(1).params, _meta: envelope() } }],
      [{ jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: envelope() } }, initialize(1)],
    ]) {
      const { send, lines, tick } = harness(modernOpening);
      for (const message of messages) send(message);
      await tick();
      expect(lines.filter((line) => (line as { id: unknown }).id === 1)).toEqual([]);
    }
  });

  it("leaves to the server a 2026-07-28 request it cannot answer as the server would", async () => {
    const { connection, send, lines, tick } = harness(modernOpening);
    const { "io.modelcontextprotocol/clientInfo": _, ...noClient } = envelope();
    for (const params of [
      { _meta: envelope("2027-01-01") },
      { _meta: noClient },
      { _meta: { ...envelope(), "io.modelcontextprotocol/logLevel": "debug" } },
      { _meta: envelope(), cursor: "next" },
      {},
    ]) {
      send({ jsonrpc: "2.0", id: 1, method: "tools/list", params });
      send({ jsonrpc: "2.0", id: 2, method: "server/discover", params });
    }
    await tick();
    expect(lines).toEqual([]);
    expect(await connection.needsServer).toBe(true);
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

describe("StdioConnection when the client ends its input", () => {
  it("lets the server answer what was already asked, then closes", async () => {
    const { connection, send, lines, tick, input } = harness();
    send(initialize(1));
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "Read" } });
    input.end();
    expect(await connection.needsServer).toBe(true);
    let closed = false;
    void connection.whenClosed.then(() => (closed = true));
    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    await tick();
    expect(closed).toBe(false);
    expect(seen.map((m) => (m as { method: string }).method)).toEqual(["initialize", "tools/call"]);
    await connection.send({ jsonrpc: "2.0", id: 2, result: { content: [] } });
    await connection.whenClosed;
    expect(lines.at(-1)).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [] } });
  });

  it("counts a cancelled request as settled, and a last line without its newline as a line", async () => {
    const { connection, send, lines, input } = harness(undefined);
    await connection.start();
    connection.onmessage = () => {};
    send({ jsonrpc: "2.0", id: 5, method: "tools/call" });
    input.end(
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } }),
    );
    await connection.whenClosed;
    expect(lines).toEqual([]);
  });

  it("does not wait for the answer to a subscription the client ended with its input", async () => {
    const { connection, send, input } = harness(undefined);
    connection.onmessage = () => {};
    await connection.start();
    send({ jsonrpc: "2.0", id: 3, method: "subscriptions/listen", params: {} });
    send({ jsonrpc: "2.0", id: 4, method: "tools/list", params: {} });
    input.end();
    let closed = false;
    void connection.whenClosed.then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false); // tools/list is still owed an answer
    await connection.send({ jsonrpc: "2.0", id: 4, result: { tools: [] } });
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(true);
  });

  it("tells the server it is not needed when everything asked was answered by the opening", async () => {
    const { connection, send, input } = harness();
    send(initialize(1));
    await new Promise((r) => setImmediate(r));
    input.end();
    expect(await connection.needsServer).toBe(false);
    await connection.whenClosed;
  });
});

describe("StdioConnection framing", () => {
  it("drops a frame over MAX_FRAME_BYTES with one error, quickly, and reads the next frame", async () => {
    const { connection, send, lines, tick, input } = harness(undefined);
    const seen: unknown[] = [];
    connection.onmessage = (m) => seen.push(m);
    await connection.start();
    const piece = "x".repeat(1024 * 1024);
    input.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
    for (let written = 0; written <= MAX_FRAME_BYTES; written += piece.length) input.write(piece);
    input.write('"}}\n');
    send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await tick();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ id: 1, error: { code: -32600 } });
    expect((lines[0] as { error: { message: string } }).error.message).toContain("file path");
    expect(seen).toEqual([{ jsonrpc: "2.0", id: 2, method: "ping" }]);
  });

  it("answers an oversized request under the id it put last, and one without a readable id with null", async () => {
    const { connection, lines, tick, input } = harness(undefined);
    connection.onmessage = () => {};
    await connection.start();
    const pad = "x".repeat(MAX_FRAME_BYTES + 1);
    // An "id" inside params comes first; the request's own id is the object's last member.
    input.write(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"id":7,"arguments":{"c":"${pad}"}},"id":"call-9"}\n`,
    );
    input.write(`{"jsonrpc":"2.0","method":"notifications/x","params":{"c":"${pad}"}}\n`);
    await tick();
    expect(lines).toMatchObject([
      { id: "call-9", error: { code: -32600 } },
      { id: null, error: { code: -32600 } },
    ]);
  });
});

describe("oversizedFrameId", () => {
  it("reads the top-level id from the first characters, following strings and nesting", () => {
    expect(oversizedFrameId('{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"a":"', "")).toBe(12);
    expect(oversizedFrameId('{ "id" : "a\\"b" , "method":', "")).toBe('a"b');
    expect(oversizedFrameId('{"params":{"id":3},"method":"x","id":4,"p":"', "")).toBe(4);
    // "id" as a value, and inside a string, is not a key.
    expect(oversizedFrameId('{"method":"id","x":"\\"id\\":5,","params":{"id":6,"pad":"', "")).toBeNull();
  });

  it("reads it from the last characters when it is the object's last member", () => {
    expect(oversizedFrameId('{"params":{"pad":"', 'xx"}},"id":-3}\r')).toBe(-3);
    expect(oversizedFrameId('{"params":{"pad":"', 'xx"},"id":"q"} ')).toBe("q");
    // The key `x\"id` ends in "id" but is not it; nor is an id of a nested object.
    expect(oversizedFrameId('{"params":{"pad":"', 'x","x\\"id":5}')).toBeNull();
    expect(oversizedFrameId('{"params":{"pad":"', 'x","o":{"id":5}}')).toBeNull();
  });

  it("takes only ids MCP allows", () => {
    expect(oversizedFrameId('{"id":1.5,"method":"x","p":"', "")).toBeNull();
    expect(oversizedFrameId('{"id":null,"method":"x","p":"', "")).toBeNull();
    expect(oversizedFrameId("", ',"id":99999999999999999999}')).toBeNull();
  });

  it("waits once for a slow reader to drain, however many answers are queued", async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 64 });
    const connection = new StdioConnection(input, output, undefined);
    await connection.start();
    const sent = Array.from({ length: 40 }, (_, id) =>
      connection.send({ jsonrpc: "2.0", id, result: { text: "x".repeat(100) } }),
    );
    expect(output.listenerCount("drain")).toBeLessThanOrEqual(1);
    let text = "";
    output.on("data", (chunk: Buffer) => (text += chunk));
    await Promise.all(sent);
    expect(
      text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).id),
    ).toEqual(Array.from({ length: 40 }, (_, id) => id));
  });

  it("reads a large frame that arrives in many chunks", async () => {
    const { connection, input, tick } = harness(undefined);
    const seen: Array<{ params: { pad: string } }> = [];
    connection.onmessage = (m) => seen.push(m as never);
    await connection.start();
    const pad = "é".repeat(8 * 1024 * 1024);
    const frame = Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", method: "x", params: { pad } })}\n`);
    // Odd chunk sizes split multi-byte characters, as a pipe does.
    for (let at = 0; at < frame.length; at += 65_537) input.write(frame.subarray(at, at + 65_537));
    await tick();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.params.pad).toBe(pad);
  });
});

describe("cc-tools mcp over a pipe", () => {
  it("answers every request of `printf ... | cc-tools mcp` before exiting", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir, "--allow", "Bash(echo:*)"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stdin.end(
      [
        initialize(1),
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "Bash", arguments: { command: "echo piped" } },
        },
      ]
        .map((m) => JSON.stringify(m))
        .join("\n"),
    );
    const code = await new Promise((r) => child.on("close", r));
    expect(code).toBe(0);
    const answers = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers[2].result.content[0].text).toContain("piped");
  });

  it(
    "kills a call still running when the client has closed stdin, after the drain time",
    async () => {
      const dir = tempDir();
      // Unique to this run: another test's `sleep 95…` must not match it as a substring.
      const marker = `sleep ${40 + Math.floor(Math.random() * 1000)}.${process.pid}`;
      const child = spawn(
        process.execPath,
        [CLI, "mcp", "--cwd", dir, "--permission-mode", "bypassPermissions"],
        {
          stdio: ["pipe", "ignore", "pipe"],
        },
      );
      child.stdin.write(`${JSON.stringify(initialize(1))}\n`);
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "Bash", arguments: { command: marker } } })}\n`,
      );
      expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
      child.stdin.end();
      const code = await new Promise((r) => child.on("close", r));
      expect(code).toBe(0);
      expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
    },
    INPUT_END_DRAIN_MS + 20_000,
  );
});

describe("the built opening", () => {
  const built = JSON.parse(
    readFileSync(new URL("../../dist/bin/mcp-opening.json", import.meta.url), "utf8"),
  ) as OpeningData;

  it("matches the tools, identity and protocol versions the server itself has", () => {
    expect(built.tools).toEqual(JSON.parse(JSON.stringify(toMcpTools(builtinTools()))));
    // What each tool needs of its host, for the connection to filter the list as the server would.
    expect(built.requires).toMatchObject({
      AskUserQuestion: ["questions"],
      CronCreate: ["prompts"],
      Task: ["model"],
    });
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

  it("answers a 2026-07-28 client's server/discover exactly as the SDK server does", async () => {
    expect(built.modern?.discover.supportedVersions).toContain("2026-07-28");
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", tempDir()], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const request = (id: number, method: string) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: envelope() } })}\n`);
    request(1, "server/discover");
    request(2, "tools/list");
    // A ping forces the SDK server to load and answer the replayed discover, which is compared.
    request(3, "ping");
    await new Promise<void>((resolve) => {
      child.stdout.on("data", () => {
        if (stdout.includes('"id":3')) resolve();
      });
    });
    child.stdin.end();
    await new Promise((r) => child.on("close", r));
    const answers = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers[0].result).toEqual(built.modern!.discover);
    expect(answers[1].result).toMatchObject(built.modern!.listStamp);
    expect(stderr).not.toContain("differently");
  });
});
