/**
 * MCP server: (1) cold start, spawn → initialize → tools/list answered, against the reference filesystem server
 * in the same run, plus resident memory right after start; (2) Read of a 2000-line file on a warm connection
 * against spawning `cat`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type Bench, timePair } from "./lib.js";

const CLI = fileURLToPath(new URL("../dist/bin/cc-tools.js", import.meta.url));
const FILESYSTEM = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);
const READ_LINES = 2_000;
/** Target for resident memory right after start (from the issue). */
const RSS_TARGET_MB = 80;

const execFileAsync = promisify(execFile);

/** Spawns a server, runs initialize and tools/list, and reports the child's RSS at that moment. */
async function coldStart(command: string, args: string[]): Promise<number> {
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  await client.listTools();
  const status = readFileSync(`/proc/${transport.pid}/status`, "utf8");
  await client.close();
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const bench: Bench = async (report) => {
  const dir = mkdtempSync(join(tmpdir(), "cc-tools-bench-mcp-"));
  try {
    const rss: number[] = [];
    const start = await timePair(
      async () => rss.push(await coldStart(process.execPath, [CLI, "mcp", "--cwd", dir])),
      () => coldStart(process.execPath, [FILESYSTEM, dir]),
      9,
      1,
    );
    rss.sort((a, b) => a - b);
    const medianRss = rss[Math.floor(rss.length / 2)]!;
    report({
      name: "mcp cold start (spawn → tools/list)",
      baseline: "@modelcontextprotocol/server-filesystem",
      ...start,
      targetRatio: 0.34,
      note: `RSS after start ${medianRss.toFixed(0)} MB (target < ${RSS_TARGET_MB} MB)${medianRss < RSS_TARGET_MB ? "" : " MISSES"}`,
    });

    const file = join(dir, "big.txt");
    writeFileSync(
      file,
      Array.from({ length: READ_LINES }, (_, i) => `line ${i + 1}: ${"lorem ipsum ".repeat(5)}`).join("\n"),
    );
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp", "--cwd", dir, "--permission-mode", "bypassPermissions"],
        stderr: "ignore",
      }),
    );
    try {
      const read = await timePair(
        () => client.callTool({ name: "Read", arguments: { file_path: file } }),
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
