import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { plainToolsCall } from "../../src/mcp/direct-calls.js";
import { serveSessions } from "../../src/mcp/serve-stdio.js";
import { type ContextFactory, createToolSession } from "../../src/mcp/server.js";
import { type Message, StdioConnection } from "../../src/mcp/stdio-connection.js";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "./fixtures.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const factory =
  (workingDir: string): ContextFactory =>
  (session, host) =>
    createToolContext({ workingDir, session, host, permissionMode: "bypassPermissions" });

const INITIALIZE = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

/** Collects a peer's messages; `answer(id)` waits for the answer to one request. */
class Inbox {
  readonly messages: Message[] = [];
  private waiters: Array<() => void> = [];
  push(message: Message): void {
    this.messages.push(message);
    for (const wake of this.waiters.splice(0)) wake();
  }
  async answer(id: string | number, timeoutMs = 20_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find((m) => m.id === id && m.method === undefined);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no answer to ${id}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }
}

/** `cc-tools mcp`'s stdio serving, over in-memory streams: plain calls take the direct way. */
async function overStdio(dir: string) {
  const input = new PassThrough();
  const output = new PassThrough();
  const inbox = new Inbox();
  let pending = "";
  output.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) inbox.push(JSON.parse(line));
  });
  const connection = new StdioConnection(input, output, undefined);
  let direct = 0;
  const served = serveSessions(connection, () => {
    const session = createToolSession(factory(dir), undefined, { heartbeatMs: 50 });
    const callDirect = session.callDirect;
    session.callDirect = (...args) => {
      direct += 1;
      return callDirect(...args);
    };
    return session;
  });
  cleanups.push(async () => {
    await Promise.all([...served.sessions].map((s) => s.dispose()));
    await served.close();
  });
  const send = (...messages: unknown[]) =>
    input.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
  send(INITIALIZE, INITIALIZED);
  await inbox.answer("init");
  return { send, inbox, directCalls: () => direct };
}

/** The same session behind the SDK's own dispatch (as over HTTP): the reference the direct way must match. */
async function throughSdk(dir: string) {
  const session = createToolSession(factory(dir), undefined, { heartbeatMs: 50 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const inbox = new Inbox();
  clientSide.onmessage = (message) => inbox.push(message as Message);
  await session.server.connect(serverSide);
  await clientSide.start();
  cleanups.push(async () => {
    await session.dispose();
    await clientSide.close();
  });
  const send = (...messages: unknown[]) => {
    for (const m of messages) void clientSide.send(m as never);
  };
  send(INITIALIZE, INITIALIZED);
  await inbox.answer("init");
  return { send, inbox };
}

/** A small workspace with fixed contents and times, so two copies answer alike. */
function workspace(): string {
  const dir = tempDir();
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "a.txt"), "hello\nworld\n");
  writeFileSync(join(dir, "src", "b.ts"), "export const hello = 1;\n");
  writeFileSync(join(dir, "src", "c.ts"), "// nothing here\r\n");
  for (const [i, file] of ["a.txt", "src/b.ts", "src/c.ts"].entries()) {
    utimesSync(join(dir, file), 1_700_000_000 + i, 1_700_000_000 + i);
  }
  return dir;
}

/** tools/call params, in order: results of every shape, errors of every kind, and requests that are not plain. */
const CALLS: unknown[] = [
  { name: "Read", arguments: { file_path: "<dir>/a.txt" } },
  { name: "Read", arguments: { file_path: "<dir>/a.txt", offset: 2, limit: 1 } },
  { name: "Read", arguments: { file_path: "<dir>/missing.txt" } },
  { name: "Read", arguments: { file_path: 5 } },
  { name: "Write", arguments: { file_path: "<dir>/new.txt", content: "one\ntwo\n" } },
  { name: "Edit", arguments: { file_path: "<dir>/new.txt", old_string: "two", new_string: "three" } },
  { name: "Edit", arguments: { file_path: "<dir>/new.txt", old_string: "absent", new_string: "x" } },
  { name: "Bash", arguments: { command: "echo hi; echo oops >&2; exit 3" } },
  { name: "Bash", arguments: { command: "printf 'a\\tb'" }, _meta: { progressToken: 7, "claude/x": 1 } },
  { name: "Glob", arguments: { pattern: "**/*.ts" } },
  { name: "Grep", arguments: { pattern: "hello", output_mode: "content" } },
  { name: "TodoWrite", arguments: { todos: [{ content: "a", status: "pending", activeForm: "Doing a" }] } },
  { name: "TaskList" },
  { name: "Nope", arguments: {} },
  { name: "Read", arguments: { file_path: "<dir>/a.txt" }, extra: true },
  { name: "Read", arguments: ["<dir>/a.txt"] },
  { name: 7, arguments: {} },
  { arguments: {} },
];

describe("tools/call served directly on stdio", () => {
  it("answers every call exactly as the SDK's dispatch does, and serves the plain ones itself", async () => {
    /** Each call's answer from `peer`, with the workspace's path written as <dir>. */
    async function answersOf(peer: Awaited<ReturnType<typeof throughSdk>>, dir: string) {
      const seen: unknown[] = [];
      for (const [i, params] of CALLS.entries()) {
        const id = i % 2 ? `call-${i}` : i;
        const withDir = JSON.parse(JSON.stringify(params).replaceAll("<dir>", dir));
        peer.send({ jsonrpc: "2.0", id, method: "tools/call", params: withDir });
        seen.push(JSON.parse(JSON.stringify(await peer.inbox.answer(id)).replaceAll(dir, "<dir>")));
      }
      return seen;
    }
    const stdioDir = workspace();
    const stdio = await overStdio(stdioDir);
    const direct = await answersOf(stdio, stdioDir);
    const sdkDir = workspace();
    const sdk = await answersOf(await throughSdk(sdkDir), sdkDir);
    const directCalls = stdio.directCalls();
    for (const [i, answer] of direct.entries()) expect(answer, JSON.stringify(CALLS[i])).toEqual(sdk[i]);
    // The last four are not plain (an extra key, array arguments, a bad name or none).
    expect(directCalls).toBe(CALLS.length - 4);
    // The SDK answered the invalid ones with its -32602 error.
    expect(direct.at(-3)).toMatchObject({ error: { code: -32602 } });
  });

  it("keeps arrival order: a plain call does not overtake a call the SDK was given first", async () => {
    const dir = workspace();
    const { send, inbox, directCalls } = await overStdio(dir);
    const target = join(dir, "order.txt");
    // One chunk: a Write the SDK serves (its params are not plain), then a plain Bash that reads the file.
    send(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "Write", arguments: { file_path: target, content: "written first" }, note: "x" },
      },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "Bash", arguments: { command: `cat ${target}` } },
      },
    );
    const bash = await inbox.answer(2);
    expect(JSON.stringify(bash)).toContain("written first");
    expect(JSON.stringify(await inbox.answer(1))).toContain("Created");
    expect(directCalls()).toBe(0);
    // Once the SDK answered, plain calls take the direct way again.
    send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "Read", arguments: { file_path: target } },
    });
    expect(JSON.stringify(await inbox.answer(3))).toContain("written first");
    expect(directCalls()).toBe(1);
  });

  it("ignores what the SDK ignores: a tools/call without an id, a cancellation it would refuse", async () => {
    const dir = workspace();
    const { send, inbox, directCalls } = await overStdio(dir);
    const log = join(dir, "log.txt");
    const bash = (command: string) => ({ name: "Bash", arguments: { command } });
    // A tools/call without an id is a notification: nothing runs, and later calls still go directly.
    send({ jsonrpc: "2.0", method: "tools/call", params: bash(`echo notified >> ${log}`) });
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: bash(`echo one >> ${log}`) });
    await inbox.answer(1);
    expect(directCalls()).toBe(1);
    // A cancellation whose reason is not a string is refused by the SDK's schema: it cancels no direct call.
    send(
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: bash(`sleep 0.3; echo two >> ${log}`) },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: null } },
    );
    expect(JSON.stringify(await inbox.answer(2))).not.toContain("cancel");
    // Nor does it let a plain call overtake a call the SDK was given (an extra key) in the same chunk.
    send(
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { ...bash(`echo three >> ${log}`), x: 1 } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3, reason: 5 } },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: bash(`echo four >> ${log}`) },
    );
    await inbox.answer(3);
    await inbox.answer(4);
    expect(readFileSync(log, "utf8")).toBe("one\ntwo\nthree\nfour\n");
    // The fourth followed the third to the SDK; once both are answered, calls go directly again.
    expect(directCalls()).toBe(2);
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: bash(`echo five >> ${log}`) });
    await inbox.answer(5);
    expect(directCalls()).toBe(3);
  });

  it("cancels a direct call: its processes die, it gets no answer, and the connection goes on", async () => {
    const dir = workspace();
    const { send, inbox, directCalls } = await overStdio(dir);
    const marker = `sleep 31${Math.floor(Math.random() * 1000)}`;
    send({
      jsonrpc: "2.0",
      id: "long",
      method: "tools/call",
      params: { name: "Bash", arguments: { command: marker }, _meta: { progressToken: "p" } },
    });
    expect(await waitFor(async () => (await processesMatching(marker)).length > 0)).toBe(true);
    // A call with a progress token hears from it while it runs (the heartbeat is 50 ms here).
    expect(await waitFor(() => inbox.messages.some((m) => m.method === "notifications/progress"))).toBe(true);
    const progress = inbox.messages.find((m) => m.method === "notifications/progress");
    expect(progress?.params).toMatchObject({ progressToken: "p" });
    send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "long", reason: "enough" },
    });
    expect(await waitFor(async () => (await processesMatching(marker)).length === 0)).toBe(true);
    send({
      jsonrpc: "2.0",
      id: "next",
      method: "tools/call",
      params: { name: "Bash", arguments: { command: "echo on" } },
    });
    expect(JSON.stringify(await inbox.answer("next"))).toContain("on");
    await new Promise((r) => setTimeout(r, 200));
    expect(inbox.messages.filter((m) => m.id === "long")).toEqual([]);
    expect(directCalls()).toBe(2);
  });
});

describe("plainToolsCall", () => {
  const call = (params: unknown, extra: Record<string, unknown> = {}) =>
    plainToolsCall({ jsonrpc: "2.0", id: 1, method: "tools/call", params, ...extra } as Message);

  it("takes a name, object arguments and a _meta with a valid progress token", () => {
    expect(call({ name: "Read" })).toEqual({ name: "Read" });
    expect(call({ name: "Read", arguments: { a: 1 }, _meta: { progressToken: "t", other: 1 } })).toBeTruthy();
    expect(call({ name: "Read", _meta: { progressToken: 3 } })).toBeTruthy();
  });

  it("leaves everything else to the SDK", () => {
    expect(call({ name: "Read" }, { method: "tools/list" })).toBeUndefined();
    expect(call({ name: "Read" }, { id: undefined })).toBeUndefined();
    expect(call(undefined)).toBeUndefined();
    expect(call({ name: 1 })).toBeUndefined();
    expect(call({ name: "Read", arguments: [] })).toBeUndefined();
    expect(call({ name: "Read", arguments: null })).toBeUndefined();
    expect(call({ name: "Read", task: {} })).toBeUndefined();
    expect(call({ name: "Read", _meta: [] })).toBeUndefined();
    expect(call({ name: "Read", _meta: { progressToken: 1.5 } })).toBeUndefined();
    expect(call({ name: "Read", _meta: { progressToken: null } })).toBeUndefined();
    expect(
      call({ name: "Read", _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }),
    ).toBeUndefined();
  });
});
