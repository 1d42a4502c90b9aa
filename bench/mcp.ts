/**
 * MCP server: (1) cold start, spawn → initialize → tools/list answered, against the reference filesystem server
 * in the same run, plus resident memory right after start; (2) Read of a 2000-line file on a warm connection
 * against spawning `cat`.
 *
 * The client is a minimal newline-delimited JSON-RPC client, so the numbers are the servers' time, not an SDK
 * client's parsing and validation (which would weigh the same on both sides and blur the ratio).
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Bench, timePair } from "./lib.js";

const CLI = fileURLToPath(new URL("../dist/bin/cc-tools.js", import.meta.url));
const FILESYSTEM = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);
const READ_LINES = 2_000;
const COLD_RUNS = 11;
/** Target for resident memory right after start (from the issue). */
const RSS_TARGET_MB = 80;

const execFileAsync = promisify(execFile);

/** A JSON-RPC client over a child's stdio: one request at a time, answers matched by id. */
class RawClient {
  private nextId = 1;
  private buffer = "";
  private waiting = new Map<number, (message: unknown) => void>();

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let newline = this.buffer.indexOf("\n");
      while (newline !== -1) {
        const message = JSON.parse(this.buffer.slice(0, newline)) as { id?: number };
        this.buffer = this.buffer.slice(newline + 1);
        if (message.id !== undefined) this.waiting.get(message.id)?.(message);
        newline = this.buffer.indexOf("\n");
      }
    });
  }

  static spawn(args: string[]): RawClient {
    return new RawClient(spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] }) as never);
  }

  request(method: string, params: unknown = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  async open(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    });
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve());
      this.child.stdin.end();
      setTimeout(() => this.child.kill("SIGKILL"), 5_000).unref();
    });
  }
}

/** Spawn → tools/list answered, in ms, and the server's RSS at that moment in MB. Closing is not timed. */
async function coldStart(args: string[]): Promise<{ ms: number; rssMb: number }> {
  const start = performance.now();
  const client = RawClient.spawn(args);
  await client.open();
  await client.request("tools/list");
  const ms = performance.now() - start;
  const status = readFileSync(`/proc/${client.child.pid}/status`, "utf8");
  await client.close();
  return { ms, rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const bench: Bench = async (report) => {
  const dir = mkdtempSync(join(tmpdir(), "cc-tools-bench-mcp-"));
  try {
    const ours: number[] = [];
    const theirs: number[] = [];
    const rss: number[] = [];
    await coldStart([CLI, "mcp", "--cwd", dir]);
    // Alternate the two servers so drift in machine load hits both alike.
    for (let i = 0; i < COLD_RUNS; i++) {
      const run = await coldStart([CLI, "mcp", "--cwd", dir]);
      ours.push(run.ms);
      rss.push(run.rssMb);
      theirs.push((await coldStart([FILESYSTEM, dir])).ms);
    }
    const medianRss = median(rss);
    report({
      name: "mcp cold start (spawn → tools/list)",
      baseline: "@modelcontextprotocol/server-filesystem",
      oursMs: median(ours),
      baselineMs: median(theirs),
      targetRatio: 0.34,
      note: `RSS after start ${medianRss.toFixed(0)} MB (target < ${RSS_TARGET_MB} MB)${medianRss < RSS_TARGET_MB ? "" : " MISSES"}`,
    });

    const file = join(dir, "big.txt");
    writeFileSync(
      file,
      Array.from({ length: READ_LINES }, (_, i) => `line ${i + 1}: ${"lorem ipsum ".repeat(5)}`).join("\n"),
    );
    const client = RawClient.spawn([CLI, "mcp", "--cwd", dir, "--permission-mode", "bypassPermissions"]);
    await client.open();
    try {
      const read = await timePair(
        () => client.request("tools/call", { name: "Read", arguments: { file_path: file } }),
        () => execFileAsync("cat", [file]),
      );
      report({
        name: `mcp Read ${READ_LINES} lines (warm)`,
        baseline: "spawn cat",
        ...read,
        targetRatio: 1.0,
      });
    } finally {
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
