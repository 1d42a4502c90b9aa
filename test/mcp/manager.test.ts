import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { tempDir, testContext } from "../helpers/context.js";
import { CRASHING, EVERYTHING, processesMatching, SILENT, stdioServer, waitFor } from "./fixtures.js";

const managers: McpClientManager[] = [];
afterEach(async () => {
  while (managers.length > 0) await managers.pop()!.close();
});

function manager(servers: ConstructorParameters<typeof McpClientManager>[0], env?: NodeJS.ProcessEnv) {
  const m = new McpClientManager(servers, { cwd: tempDir(), env });
  managers.push(m);
  return m;
}

describe("McpClientManager with the reference server over stdio", () => {
  it("registers its tools as mcp__everything__* and runs them through the executor", async () => {
    const m = manager([stdioServer("everything", EVERYTHING)]);
    await m.connect();
    expect(m.servers()[0]).toMatchObject({ name: "everything", status: "connected", transport: "stdio" });
    const echo = m.tools().find((t) => t.name === "mcp__everything__echo")!;
    expect(echo.permissionLevel).toBe("execute");
    expect(echo.toDefinition().input_schema).toMatchObject({ required: ["message"] });

    const ctx = testContext({ mcpManager: m });
    const result = await runTool("mcp__everything__echo", { message: "hello" }, ctx);
    expect(result.isError).toBe(false);
    expect(ToolResult.text(result)).toContain("hello");

    const sum = await runTool("mcp__everything__get-sum", { a: "2", b: 3 }, ctx);
    expect(ToolResult.text(sum)).toContain("5");

    const invalid = await runTool("mcp__everything__echo", {}, ctx);
    expect(invalid.isError).toBe(true);
    expect(ToolResult.text(invalid)).toContain("message");

    const image = await runTool("mcp__everything__get-tiny-image", {}, ctx);
    expect(image.content.some((b) => b.type === "image" && b.mimeType === "image/png")).toBe(true);

    const embedded = await runTool(
      "mcp__everything__get-resource-reference",
      { resourceType: "Text", resourceId: 2 },
      ctx,
    );
    expect(ToolResult.text(embedded)).toContain("demo://resource/dynamic/text/2");
  });

  it("asks permission for MCP tools like any Execute tool", async () => {
    const m = manager([stdioServer("everything", EVERYTHING)]);
    await m.connect();
    const ctx = testContext({ mcpManager: m, permissionMode: "default" });
    const denied = await runTool("mcp__everything__echo", { message: "x" }, ctx);
    expect(denied.isError).toBe(true);
    expect(ToolResult.text(denied)).toContain("mcp__everything__echo");
  });

  it("applies server-wide rules: mcp__everything__* allows its tools, a narrower deny still wins", async () => {
    const m = manager([stdioServer("everything", EVERYTHING)]);
    await m.connect();
    const source = { scope: "cli" as const, root: tempDir() };
    const ctx = testContext({
      mcpManager: m,
      permissionMode: "default",
      rules: [
        { rule: "mcp__everything__*", behavior: "allow", source },
        { rule: "mcp__everything__get-env", behavior: "deny", source },
      ],
    });
    const echo = await runTool("mcp__everything__echo", { message: "allowed by wildcard" }, ctx);
    expect(echo.isError).toBe(false);
    expect(ToolResult.text(echo)).toContain("allowed by wildcard");
    const env = await runTool("mcp__everything__get-env", {}, ctx);
    expect(env.isError).toBe(true);
    expect(ToolResult.text(env)).toContain("deny rule mcp__everything__get-env");
    const other = testContext({
      mcpManager: m,
      permissionMode: "default",
      rules: [{ rule: "mcp__github__*", behavior: "allow", source }],
    });
    expect((await runTool("mcp__everything__echo", { message: "x" }, other)).isError).toBe(true);
  });

  it("lists and reads resources with ListMcpResources / ReadMcpResource", async () => {
    const m = manager([stdioServer("everything", EVERYTHING)]);
    const ctx = testContext({ mcpManager: m });
    const listed = await runTool("ListMcpResources", {}, ctx);
    const resources = JSON.parse(ToolResult.text(listed)) as Array<{
      uri: string;
      server: string;
      name: string;
    }>;
    const doc = resources.find((r) => r.uri.endsWith("architecture.md"))!;
    expect(doc).toMatchObject({ server: "everything", name: "architecture.md", mimeType: "text/markdown" });

    const read = await runTool("ReadMcpResource", { server: "everything", uri: doc.uri }, ctx);
    expect(read.isError).toBe(false);
    expect(ToolResult.text(read).length).toBeGreaterThan(100);

    const blob = await runTool(
      "ReadMcpResource",
      { server: "everything", uri: "demo://resource/dynamic/blob/1" },
      ctx,
    );
    expect(ToolResult.text(blob)).toContain("Resource 1: This is a base64 blob");

    const unknown = await runTool("ReadMcpResource", { server: "nope", uri: doc.uri }, ctx);
    expect(unknown.isError).toBe(true);
    expect(ToolResult.text(unknown)).toMatch(/no MCP server named "nope".*everything \(connected\)/);
    expect(ToolResult.text(unknown)).toContain("ListMcpResources {}");

    // A wrong URI is answered with the URIs the server does have.
    const missing = await runTool("ReadMcpResource", { server: "everything", uri: "demo://nope" }, ctx);
    expect(missing.isError).toBe(true);
    expect(ToolResult.text(missing)).toMatch(/not found\. MCP server everything offers: demo:\/\/resource/);
    expect(ToolResult.text(missing)).toContain(doc.uri);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("McpClientManager over Streamable HTTP", () => {
  it("connects to the reference server's /mcp endpoint", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      let stderr = "";
      child.stderr.on("data", (c) => (stderr += c));
      expect(await waitFor(() => stderr.includes("listening"), 20_000)).toBe(true);
      const m = manager([
        {
          name: "everything",
          ok: true,
          source: "test",
          config: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
        },
      ]);
      const ctx = testContext({ mcpManager: m });
      await m.connect();
      expect(m.servers()[0]).toMatchObject({ status: "connected", transport: "http" });
      const result = await runTool("mcp__everything__echo", { message: "over http" }, ctx);
      expect(ToolResult.text(result)).toContain("over http");
      const listed = await runTool("ListMcpResources", { server: "everything" }, ctx);
      expect(ToolResult.text(listed)).toContain("architecture.md");
    } finally {
      child.kill();
    }
  });
});

describe("McpClientManager with failing servers", () => {
  it("reports a server that never answers and one that exits, without blocking the others", async () => {
    const m = manager(
      [
        stdioServer("silent", SILENT),
        stdioServer("broken", CRASHING, [], { CRASH_AT_START: "1" }),
        stdioServer("everything", EVERYTHING),
      ],
      // Long enough for server-everything to start on a loaded two-core machine (it took over 3 s once).
      { MCP_TIMEOUT: "10000" },
    );
    await m.connect();
    const byName = Object.fromEntries(m.servers().map((s) => [s.name, s]));
    expect(byName.everything!.status).toBe("connected");
    expect(byName.silent).toMatchObject({ status: "failed" });
    expect(byName.silent!.error).toContain("did not answer within 10000 ms");
    expect(byName.broken!.status).toBe("failed");
    expect(byName.broken!.error).toContain("refusing to start");
    // A tool of a failed server is explained by the server's state, not just "no tool named".
    const called = await runTool("mcp__broken__anything", {}, testContext({ mcpManager: m }));
    expect(ToolResult.text(called)).toContain("MCP server broken is not connected (failed)");
  });

  it("says which command or URL could not be reached", async () => {
    const m = manager([
      { name: "missing", ok: true, source: ".mcp.json", config: { command: "/no/such/mcp-server" } },
      {
        name: "nohost",
        ok: true,
        source: ".mcp.json",
        config: { type: "http", url: "http://no-such-host.invalid/mcp" },
      },
    ]);
    await m.connect();
    const byName = Object.fromEntries(m.servers().map((s) => [s.name, s]));
    expect(byName.missing!.error).toContain(
      'command not found: /no/such/mcp-server. Check "command" in .mcp.json',
    );
    expect(byName.nohost!.error).toContain("cannot reach http://no-such-host.invalid/mcp");
    // The hung server's process was killed, not left behind.
    expect(await waitFor(async () => (await processesMatching(SILENT)).length === 0)).toBe(true);
  });

  it("restarts a stdio server that dies and keeps its tools usable", async () => {
    const log = join(tempDir(), "starts.log");
    writeFileSync(log, "");
    const m = manager([stdioServer("crashy", CRASHING, [], { START_LOG: log })]);
    const ctx = testContext({ mcpManager: m });
    await m.connect();
    const first = ToolResult.text(await runTool("mcp__crashy__pid", {}, ctx));
    const crashed = await runTool("mcp__crashy__crash", {}, ctx);
    expect(crashed.isError).toBe(true);
    expect(ToolResult.text(crashed)).toContain("crashy");
    expect(await waitFor(() => readFileSync(log, "utf8").trim().split("\n").length === 2)).toBe(true);
    const second = await runTool("mcp__crashy__pid", {}, ctx);
    expect(second.isError).toBe(false);
    expect(ToolResult.text(second)).not.toBe(first);
    appendFileSync(log, "");
  });
});
