import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { mcpHost } from "../../src/mcp/server.js";
import { toolUnavailable } from "../../src/process/shells.js";
import { allTools, builtinTools } from "../../src/registry.js";
import { tempDir } from "../helpers/context.js";
import { processesMatching, waitFor } from "../mcp/fixtures.js";
import { CLI } from "./cli.js";
import { closeAfterTest, connectCli, text, workspace } from "./mcp-client.js";

const run = promisify(execFile);
const has = (name: string) => allTools().some((t) => t.name === name);
/** The built `cc-tools mcp`, driven by the SDK's own client as an MCP host would. */
const serve = (dir: string, env: Record<string, string>, extraArgs: string[] = []) =>
  connectCli(new Client({ name: "e2e", version: "1" }), dir, env, extraArgs);

describe("cc-tools mcp (built CLI) with the SDK client", () => {
  it("lists the tools and runs Bash; errors come back as isError", async () => {
    const { dir, env } = workspace();
    const client = await serve(dir, env, ["--permission-mode", "bypassPermissions"]);
    const { tools } = await client.listTools();
    // A client without elicitation: AskUserQuestion is not offered; one stdio session has nobody to message.
    expect(tools.map((t) => t.name).sort()).toEqual(
      builtinTools()
        .availableFor(mcpHost(() => false))
        .available.names()
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

  it("offers PowerShell only where pwsh is on PATH, in the opening's answer and the server's alike", async () => {
    const { dir, env } = workspace();
    const bin = tempDir("cc-tools-path-");
    const path = `${bin}:${process.env.PATH}`;
    const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);
    const installed = toolUnavailable("PowerShell", process.env.PATH) === undefined;
    const before = await serve(dir, { ...env, PATH: path });
    expect((await names(before)).includes("PowerShell")).toBe(installed);
    writeFileSync(join(bin, "pwsh"), "#!/bin/sh\n", { mode: 0o755 });
    const after = await serve(dir, { ...env, PATH: path });
    // The first answer comes from the opening (build-time data), the second from the SDK server.
    expect(await names(after)).toContain("PowerShell");
    await after.callTool({ name: "TaskOutput", arguments: { task_id: "none" } });
    expect(await names(after)).toContain("PowerShell");
  });

  it("runs what the client approved inside the workspace; --permission-mode default asks for it again", async () => {
    const { dir, env } = workspace();
    // The rules alone: inside the OS sandbox `touch x` would need no approval.
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ sandbox: { enabled: false } }));
    const client = await serve(dir, env);
    const made = await client.callTool({ name: "Bash", arguments: { command: "touch x" } });
    expect(made.isError).toBeFalsy();
    expect(existsSync(join(dir, "x"))).toBe(true);
    const outside = join(tempDir("cc-tools-outside-"), "y");
    const far = await client.callTool({ name: "Bash", arguments: { command: `touch ${outside}` } });
    expect(far.isError).toBeFalsy(); // a command's arguments are the client's to judge; redirections are not
    const redirect = await client.callTool({ name: "Bash", arguments: { command: `echo 1 > ${outside}2` } });
    expect(redirect.isError).toBe(true);
    expect(text(redirect)).toContain("no user could be asked");
    expect(existsSync(`${outside}2`)).toBe(false);

    const strict = await serve(dir, env, ["--permission-mode", "default"]);
    const denied = await strict.callTool({ name: "Bash", arguments: { command: "touch z" } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain("Ask the user to allow `Bash(touch z)`");
    expect(existsSync(join(dir, "z"))).toBe(false);
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

  it("serves the 2025 revisions: a negotiating client settles on 2025-11-25, a 2026-07-28 pin is refused", async () => {
    const { dir, env } = workspace();
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir, "--http", "--port", "0"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
      expect(await waitFor(() => /listening on (http\S+?\/mcp)\b/.test(stderr))).toBe(true);
      const url = new URL(/listening on (http\S+?\/mcp)\b/.exec(stderr)![1]!);
      const negotiating = closeAfterTest(new Client({ name: "negotiating", version: "1" }));
      await negotiating.connect(new StreamableHTTPClientTransport(url));
      expect((await negotiating.listTools()).tools.map((t) => t.name)).toContain("Bash");
      expect(negotiating.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      const pinned = new Client(
        { name: "pinned", version: "1" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await expect(pinned.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(
        /did not offer pinned protocol version 2026-07-28/,
      );
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("close", r));
    }
  });
});
