import { execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { allTools } from "../../src/registry.js";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "../mcp/fixtures.js";
import { CLI } from "./cli.js";

const run = promisify(execFile);
const has = (name: string) => allTools().some((t) => t.name === name);
const clients: Client[] = [];
afterEach(async () => {
  while (clients.length > 0) await clients.pop()!.close();
});

function workspace() {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  return {
    dir,
    env: { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state"), CC_TOOLS_LOG: "silent" },
  };
}

/** The built `cc-tools mcp`, driven by the SDK's own client as an MCP host would. */
async function serve(dir: string, env: Record<string, string>, extraArgs: string[] = []) {
  const client = new Client({ name: "e2e", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--cwd", dir, ...extraArgs],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "ignore",
    }),
  );
  clients.push(client);
  return client;
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

describe("cc-tools mcp (built CLI) with the SDK client", () => {
  it("lists the tools and runs Bash; errors come back as isError", async () => {
    const { dir, env } = workspace();
    const client = await serve(dir, env, ["--permission-mode", "bypassPermissions"]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      allTools()
        .map((t) => t.name)
        .sort(),
    );
    const bash = await client.callTool({ name: "Bash", arguments: { command: "echo from-mcp && pwd" } });
    expect(bash.isError).toBeFalsy();
    expect(text(bash)).toContain("from-mcp");
    expect(text(bash)).toContain(dir);
    const failing = await client.callTool({ name: "Bash", arguments: { command: "exit 3" } });
    expect(failing.isError).toBe(true);
    expect(text(failing)).toContain("3");
    const unknown = await client.callTool({ name: "NoSuchTool", arguments: {} });
    expect(unknown.isError).toBe(true);
  });

  it.runIf(has("Read") && has("Edit"))("reads and edits a file across calls of one connection", async () => {
    const { dir, env } = workspace();
    const file = join(dir, "notes.txt");
    writeFileSync(file, "alpha\nbeta\n");
    const client = await serve(dir, env, ["--permission-mode", "acceptEdits"]);
    const read = await client.callTool({ name: "Read", arguments: { file_path: file } });
    expect(text(read)).toMatch(/1\talpha/);
    const edit = await client.callTool({
      name: "Edit",
      arguments: { file_path: file, old_string: "beta", new_string: "gamma" },
    });
    expect(edit.isError).toBeFalsy();
    expect(readFileSync(file, "utf8")).toBe("alpha\ngamma\n");
  });

  it.runIf(has("Grep"))("greps the workspace", async () => {
    const { dir, env } = workspace();
    writeFileSync(join(dir, "a.ts"), "const needle = 1;\n");
    const client = await serve(dir, env);
    const grep = await client.callTool({ name: "Grep", arguments: { pattern: "needle" } });
    expect(text(grep)).toContain("a.ts");
  });

  it("refuses a call that needs approval and names the rule that would allow it", async () => {
    const { dir, env } = workspace();
    // The rules alone: inside the OS sandbox `touch x` would need no approval.
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ sandbox: { enabled: false } }));
    const client = await serve(dir, env);
    const denied = await client.callTool({ name: "Bash", arguments: { command: "touch x" } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/--allow '.*Bash/);
  });

  it("cancelling a Bash sleep leaves no sleep process; closing stdin kills background jobs", async () => {
    const { dir, env } = workspace();
    const client = await serve(dir, env, ["--permission-mode", "bypassPermissions"]);
    const foreground = `sleep 30.${process.pid}1`;
    const controller = new AbortController();
    const call = client.callTool(
      { name: "Bash", arguments: { command: foreground } },
      { signal: controller.signal },
    );
    expect(await waitFor(async () => (await processesMatching(foreground)).length > 0)).toBe(true);
    controller.abort("e2e cancels");
    await expect(call).rejects.toThrow();
    expect(await waitFor(async () => (await processesMatching(foreground)).length === 0)).toBe(true);

    const background = `sleep 30.${process.pid}2`;
    const started = await client.callTool({
      name: "Bash",
      arguments: { command: background, run_in_background: true },
    });
    expect(started.isError).toBeFalsy();
    expect(await waitFor(async () => (await processesMatching(background)).length > 0)).toBe(true);
    await client.close();
    expect(await waitFor(async () => (await processesMatching(background)).length === 0)).toBe(true);
  });
});

describe("cc-tools mcp with the MCP Inspector CLI (npx)", () => {
  const inspector = (dir: string, env: Record<string, string>, args: string[]) =>
    run(
      "npx",
      [
        "--no-install",
        "@modelcontextprotocol/inspector",
        "--cli",
        process.execPath,
        CLI,
        "mcp",
        "--cwd",
        dir,
        ...args,
      ],
      { env: { ...process.env, ...env }, timeout: 90_000 },
    );

  it("lists tools and calls Bash", async () => {
    const { dir, env } = workspace();
    const listed = JSON.parse((await inspector(dir, env, ["--method", "tools/list"])).stdout);
    expect(listed.tools.map((t: { name: string }) => t.name)).toContain("Bash");
    const called = JSON.parse(
      (
        await inspector(dir, env, [
          "--permission-mode",
          "bypassPermissions",
          "--method",
          "tools/call",
          "--tool-name",
          "Bash",
          "--tool-arg",
          "command=echo inspected",
        ])
      ).stdout,
    );
    expect(called.content[0].text).toBe("inspected");
  }, 120_000);
});

describe("cc-tools mcp --http (built CLI)", () => {
  it("refuses a non-loopback address without a token", async () => {
    const { dir, env } = workspace();
    const failed = await run(process.execPath, [CLI, "mcp", "--cwd", dir, "--http", "--host", "0.0.0.0"], {
      env: { ...process.env, ...env, CC_TOOLS_TOKEN: "" },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(
      "needs a bearer token: pass --token or set CC_TOOLS_TOKEN",
    );
  });

  it("with CC_TOOLS_TOKEN, answers 401 to a wrong token and serves the right one", async () => {
    const { dir, env } = workspace();
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir, "--http", "--port", "0"], {
      env: { ...process.env, ...env, CC_TOOLS_TOKEN: "right-token" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
      expect(await waitFor(() => /listening on (\S+)/.test(stderr))).toBe(true);
      expect(stderr).toContain("(bearer token required)");
      const url = /listening on (\S+)/.exec(stderr)![1]!;
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      const post = (token: string) =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: `Bearer ${token}`,
          },
          body: initialize,
        });
      expect((await post("wrong-token")).status).toBe(401);
      const ok = await post("right-token");
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('"serverInfo"');
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("close", r));
    }
  });
});
