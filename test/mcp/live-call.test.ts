import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import { Client, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { createToolSession, type ToolSession } from "../../src/mcp/server.js";
import { StdioConnection } from "../../src/mcp/stdio-connection.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir } from "../helpers/context.js";

process.env.CC_TOOLS_LOG = "silent";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

/** A client transport over a pair of streams, one JSON-RPC message a line (what stdio carries). */
class StreamTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough,
  ) {}
  async start() {
    createInterface({ input: this.input }).on("line", (line) => this.onmessage?.(JSON.parse(line)));
  }
  async send(message: JSONRPCMessage) {
    this.output.write(`${JSON.stringify(message)}\n`);
  }
  async close() {
    this.output.end();
    this.onclose?.();
  }
}

/**
 * The stdio server in this process, waiting `timeoutMs` for answers, and a 2026-07-28 client whose user
 * takes `answerAfterMs` to allow.
 */
async function slowUser(dir: string, answerAfterMs: number, timeoutMs: number) {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const sessions: ToolSession[] = [];
  const served = serveStdio(
    () => {
      const session = createToolSession(
        (s, host) =>
          createToolContext({
            workingDir: dir,
            session: s,
            host,
            config: emptySettings(dir),
            permissionMode: "default",
          }),
        undefined,
        { answerTimeoutMs: timeoutMs },
      );
      sessions.push(session);
      return session.server;
    },
    { transport: new StdioConnection(toServer, toClient, undefined) },
  );
  const client = new Client(
    { name: "slow", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  let asked = 0;
  client.setRequestHandler("elicitation/create", async () => {
    asked += 1;
    await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
    return { action: "accept", content: { decision: "Allow once" } };
  });
  await client.connect(new StreamTransport(toClient, toServer));
  cleanups.push(async () => {
    await client.close();
    await Promise.all(sessions.map((s) => s.dispose()));
    await served.close();
  });
  return { client, asked: () => asked };
}

describe("a 2026-07-28 call waiting for its client's answer", () => {
  it("is stopped when the answer does not come in time; the late answer runs nothing", async () => {
    const dir = tempDir();
    const outside = join(tempDir("cc-tools-outside-"), "late.txt");
    const { client, asked } = await slowUser(dir, 400, 100);
    const late = await client.callTool({ name: "Write", arguments: { file_path: outside, content: "x" } });
    expect(asked()).toBe(1);
    expect(late.isError).toBe(true);
    expect(text(late)).toContain("No call is waiting for this answer");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(outside)).toBe(false);
  });

  it("runs once the answer comes in time", async () => {
    const dir = tempDir();
    const outside = join(tempDir("cc-tools-outside-"), "in-time.txt");
    const { client } = await slowUser(dir, 50, 5_000);
    const done = await client.callTool({ name: "Write", arguments: { file_path: outside, content: "x" } });
    expect(done.isError).toBeFalsy();
    expect(existsSync(outside)).toBe(true);
  });
});
