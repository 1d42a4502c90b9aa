import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "../mcp/fixtures.js";
import { CLI, cli } from "./cli.js";

// cc-tools reads the project's .mcp.json for its own servers, and that is where the README tells users to
// list cc-tools for their client. These tests build that set-up for real (a `cc-tools` on PATH, as after
// `npm install -g`) and count the cc-tools processes with ps: one per client connection, never a chain.

const clients: Client[] = [];
afterEach(async () => {
  while (clients.length > 0) await clients.pop()!.close();
});

/** A PATH holding `cc-tools` (a link to the built CLI, like a global install), and a fresh user config. */
function setUp() {
  const bin = tempDir("cc-tools-bin-");
  symlinkSync(CLI, join(bin, "cc-tools"));
  const home = tempDir("cc-tools-home-");
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH: `${bin}:${process.env.PATH}`,
    CLAUDE_CONFIG_DIR: home,
    CC_TOOLS_STATE_DIR: join(home, "state"),
    CC_TOOLS_LOG: "silent",
  };
  delete env.CC_TOOLS_MCP_DEPTH;
  return { env };
}

/** A project .mcp.json, approved by the user (project servers start only once approved). */
function mcpJson(dir: string, servers: Record<string, unknown>): void {
  writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
  mkdirSync(join(dir, ".claude"), { recursive: true });
  writeFileSync(
    join(dir, ".claude", "settings.local.json"),
    JSON.stringify({ enableAllProjectMcpServers: true }),
  );
}

async function connectStdio(dir: string, env: Record<string, string>, command = "cc-tools") {
  const client = new Client({ name: "e2e", version: "1" });
  await client.connect(
    new StdioClientTransport({ command, args: ["mcp", "--cwd", dir], env, stderr: "ignore" }),
  );
  clients.push(client);
  return client;
}

/** Waits until the server has settled its own servers: ListMcpResources waits for every connection. */
async function settled(client: Client): Promise<void> {
  await client.callTool({ name: "ListMcpResources", arguments: {} });
}

describe("cc-tools never starts itself", () => {
  it("the README's .mcp.json set-up: one cc-tools process per client connection", async () => {
    const { env } = setUp();
    const dir = tempDir("cc-tools-self-");
    // Every way the same project can name cc-tools: the README's entry, npx, node on the script, a wrapper.
    mcpJson(dir, {
      "cc-tools": { command: "cc-tools", args: ["mcp", "--cwd", dir] },
      npx: { command: "npx", args: ["-y", "cc-tools", "mcp", "--cwd", dir] },
      node: { command: process.execPath, args: [CLI, "mcp", "--cwd", dir] },
      wrapped: { command: "sh", args: ["-c", `exec cc-tools mcp --cwd ${dir}`] },
    });
    const first = await connectStdio(dir, env);
    await settled(first);
    expect(await processesMatching(`mcp --cwd ${dir}`)).toHaveLength(1);
    const { tools } = await first.listTools();
    expect(tools.filter((t) => t.name.startsWith("mcp__"))).toEqual([]);

    const second = await connectStdio(dir, env);
    await settled(second);
    expect(await processesMatching(`mcp --cwd ${dir}`)).toHaveLength(2);

    const status = cli(["mcp-servers", "--cwd", dir, "--json"], { env });
    expect(status.code).toBe(0);
    const servers = (
      JSON.parse(status.stdout) as { servers: Array<{ name: string; status: string; reason?: string }> }
    ).servers;
    expect(servers.map((s) => [s.name, s.status])).toEqual([
      ["cc-tools", "skipped"],
      ["npx", "skipped"],
      ["node", "skipped"],
      ["wrapped", "skipped"],
    ]);
    expect(servers[0]!.reason).toContain("cc-tools does not start itself");
    expect(servers[3]!.reason).toContain("answered initialize as cc-tools");
    const table = cli(["mcp-servers", "--cwd", dir], { env });
    expect(table.stdout).toMatch(/wrapped\s+stdio\s+skipped/);
  }, 90_000); // a dozen real node processes start one after another

  it("two workspaces whose cc-tools list each other: still one process", async () => {
    const { env } = setUp();
    const a = tempDir("cc-tools-a-");
    const b = tempDir("cc-tools-b-");
    // Wrapped in sh so that only the identity answer and the depth marker can stop the chain.
    mcpJson(a, { b: { command: "sh", args: ["-c", `exec cc-tools mcp --cwd ${b}`] } });
    mcpJson(b, { a: { command: "sh", args: ["-c", `exec cc-tools mcp --cwd ${a}`] } });
    const client = await connectStdio(a, env);
    await settled(client);
    const running = [...(await processesMatching(`--cwd ${a}`)), ...(await processesMatching(`--cwd ${b}`))];
    expect(running).toHaveLength(1);
  });

  it("a cc-tools started by a cc-tools starts no servers of its own (the depth guard)", async () => {
    const { env } = setUp();
    const dir = tempDir("cc-tools-deep-");
    mkdirSync(join(dir, "sub"));
    // A duration no other test uses: tests in other workers run `sleep 30` commands of their own.
    const sleeper = `sleep 30.${process.pid}3`;
    mcpJson(dir, { other: { command: "sh", args: ["-c", sleeper] } });
    const status = cli(["mcp-servers", "--cwd", dir, "--json"], { env: { ...env, CC_TOOLS_MCP_DEPTH: "1" } });
    const [server] = (JSON.parse(status.stdout) as { servers: Array<{ status: string; reason: string }> })
      .servers;
    expect(server!.status).toBe("skipped");
    expect(server!.reason).toContain("CC_TOOLS_MCP_DEPTH=1");
    expect(await processesMatching(sleeper)).toEqual([]);
  });

  it("an HTTP URL that points back at the server itself is recognised and skipped", async () => {
    const { env } = setUp();
    const dir = tempDir("cc-tools-http-");
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    mcpJson(dir, { self: { type: "http", url } });
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir, "--http", "--port", String(port)], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
      expect(await waitFor(() => stderr.includes("listening on"))).toBe(true);
      const client = new Client({ name: "e2e", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      clients.push(client);
      await settled(client);
      const { tools } = await client.listTools();
      expect(tools.filter((t) => t.name.startsWith("mcp__"))).toEqual([]);
      const status = cli(["mcp-servers", "--cwd", dir, "--json"], { env });
      const [self] = (JSON.parse(status.stdout) as { servers: Array<{ status: string; reason: string }> })
        .servers;
      expect(self!.status).toBe("skipped");
      expect(self!.reason).toContain(url);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("close", r));
    }
  });
});

describe("cc-tools mcp on a terminal, and its flags", () => {
  it.skipIf(spawnSync("script", ["--version"]).error !== undefined)(
    "on a terminal, says in one line what it serves, where, and under which permissions",
    async () => {
      const dir = tempDir();
      // `script` gives the server a real terminal, as when someone types `cc-tools mcp` to try it.
      const child = spawn("script", ["-qc", `${process.execPath} ${CLI} mcp --cwd ${dir}`, "/dev/null"], {
        stdio: ["pipe", "pipe", "ignore"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      try {
        expect(await waitFor(() => out.includes("\n"))).toBe(true);
        const lines = out.split(/\r?\n/).filter((l) => l.trim() !== "");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`cc-tools MCP server on stdio: Claude Code's tools for ${dir}`);
        expect(lines[0]).toContain("permission mode default");
      } finally {
        child.kill("SIGTERM");
        await new Promise((r) => child.on("close", r));
      }
      // Not on a terminal (a client's pipe): nothing on stderr.
      expect(cli(["mcp", "--cwd", dir]).stderr).toBe("");
    },
  );

  it("--port or --host without --http is a usage error", () => {
    const dir = tempDir();
    for (const flags of [
      ["--port", "4000"],
      ["--host", "0.0.0.0"],
    ]) {
      const run = cli(["mcp", "--cwd", dir, ...flags]);
      expect(run.code, flags[0]).toBe(2);
      expect(run.stderr).toContain(`${flags[0]} only applies to --http`);
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
