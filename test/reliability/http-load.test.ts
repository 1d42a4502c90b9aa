import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { CLI } from "../e2e/cli.js";
import { tempDir } from "../helpers/context.js";

/**
 * HTTP load and isolation: CLIENTS sessions against one built server (`cc-tools mcp --http`), each making
 * CALLS mixed calls (Read, Edit, Write, Glob, Grep, Bash with its own cwd), all at once. Every call must
 * answer without error, and no session may see another's state: its shell's cwd, or its files read (an
 * Edit of another client's file is refused as not read). Reports throughput and the server's RSS before,
 * at peak and after. Full size (8 x 500) with RELIABILITY_FULL=1; CI runs 4 x 30.
 */
const FULL = process.env.RELIABILITY_FULL === "1";
const CLIENTS = FULL ? 8 : 4;
const CALLS = FULL ? 500 : 30;

const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** The JSON-RPC answer in a POST response, sent as JSON or as one SSE event. */
async function answerOf(response: Response): Promise<Record<string, unknown>> {
  const body = await response.text();
  if (response.headers.get("content-type")?.includes("text/event-stream")) {
    const data = body
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    return data.find((m) => "result" in m || "error" in m) ?? {};
  }
  return JSON.parse(body);
}

class Client {
  private session = "";
  private nextId = 1;
  constructor(private readonly url: string) {}

  async open(): Promise<void> {
    const init = await fetch(this.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "load", version: "1" },
        },
      }),
    });
    await init.text();
    this.session = init.headers.get("mcp-session-id")!;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  private post(message: unknown): Promise<Response> {
    return fetch(this.url, {
      method: "POST",
      headers: { ...headers, "mcp-session-id": this.session },
      body: JSON.stringify(message),
    });
  }

  async call(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
    const id = this.nextId++;
    const answer = await answerOf(
      await this.post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
    );
    const result = answer.result as { isError?: boolean; content: Array<{ text?: string }> } | undefined;
    if (!result) return { isError: true, text: JSON.stringify(answer.error) };
    return { isError: Boolean(result.isError), text: result.content.map((c) => c.text ?? "").join("") };
  }

  async close(): Promise<void> {
    await fetch(this.url, { method: "DELETE", headers: { ...headers, "mcp-session-id": this.session } });
  }
}

async function clientRun(url: string, dir: string, index: number) {
  const client = new Client(url);
  await client.open();
  const own = join(dir, `file-${index}.txt`);
  writeFileSync(own, `client ${index} v0\n`);
  const other = join(dir, `file-${(index + 1) % CLIENTS}.txt`);
  const failures: string[] = [];
  const leaks: string[] = [];
  await client.call("Bash", { command: `mkdir -p sub-${index} && cd sub-${index}` });
  await client.call("Read", { file_path: own });
  let version = 0;
  for (let i = 0; i < CALLS; i++) {
    const kind = i % 6;
    let result: { isError: boolean; text: string };
    if (kind === 0) result = await client.call("Read", { file_path: own });
    else if (kind === 1) {
      result = await client.call("Edit", {
        file_path: own,
        old_string: `v${version}`,
        new_string: `v${version + 1}`,
      });
      version++;
    } else if (kind === 2) result = await client.call("Glob", { pattern: "*.txt" });
    else if (kind === 3) result = await client.call("Grep", { pattern: `client ${index}`, path: dir });
    else if (kind === 4) {
      result = await client.call("Bash", { command: "pwd" });
      if (!result.text.trim().endsWith(`sub-${index}`)) leaks.push(`cwd: ${result.text}`);
    } else {
      // Another client's file was never read in this session: the Edit must be refused.
      const probe = await client.call("Edit", {
        file_path: other,
        old_string: "client",
        new_string: "stolen",
      });
      if (!probe.isError || !probe.text.includes("has not been read in this session"))
        leaks.push(`read-state: ${probe.text}`);
      result = await client.call("Write", {
        file_path: join(dir, `scratch-${index}.txt`),
        content: `${i}\n`,
      });
      if (i > 5) result = await client.call("Read", { file_path: join(dir, `scratch-${index}.txt`) });
    }
    if (result.isError) failures.push(`${kind}: ${result.text.slice(0, 200)}`);
  }
  await client.close();
  return { failures, leaks };
}

describe("HTTP load and isolation", () => {
  it(`${CLIENTS} clients x ${CALLS} mixed calls: no errors, no leaks between sessions`, async () => {
    const dir = tempDir();
    const server = spawn(
      process.execPath,
      [CLI, "mcp", "--http", "--port", "0", "--cwd", dir, "--permission-mode", "bypassPermissions"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    try {
      const url = await new Promise<string>((resolve) => {
        createInterface({ input: server.stderr! }).on("line", (line) => {
          const match = /listening on (http\S+?\/mcp)\b/.exec(line);
          if (match) resolve(match[1]!);
        });
      });
      const before = rssKb(server.pid!);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssKb(server.pid!));
      }, 50);
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => clientRun(url, dir, i)));
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      await new Promise((r) => setTimeout(r, 500));
      const after = rssKb(server.pid!);
      const failures = runs.flatMap((r) => r.failures);
      const leaks = runs.flatMap((r) => r.leaks);
      const calls = runs.length * CALLS;
      console.log(
        `HTTP load: ${CLIENTS} clients x ${CALLS} calls in ${seconds.toFixed(1)} s (${Math.round(calls / seconds)} calls/s), ` +
          `${failures.length} errors, ${leaks.length} leaks; server RSS ${Math.round(before / 1024)} MB before, ` +
          `${Math.round(peak / 1024)} MB at peak, ${Math.round(after / 1024)} MB after`,
      );
      expect(failures).toEqual([]);
      expect(leaks).toEqual([]);
      for (let i = 0; i < CLIENTS; i++)
        expect(readFileSync(join(dir, `file-${i}.txt`), "utf8")).toMatch(/^client \d+ v\d+\n$/);
    } finally {
      server.kill("SIGTERM");
    }
  }, 900_000);
});
