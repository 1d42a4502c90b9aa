import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { depthLimitReason, mcpDepth, selfInvocation } from "../../src/mcp/self.js";
import { tempDir, testContext } from "../helpers/context.js";
import { EVERYTHING, processesMatching, stdioServer } from "./fixtures.js";

const stdio = (command: string, ...args: string[]) => ({ command, args });

describe("recognising cc-tools in a server's configuration", () => {
  it.each([
    stdio("cc-tools", "mcp"),
    stdio("/usr/local/bin/cc-tools", "mcp", "--cwd", "/p"),
    stdio("cc-tools.cmd", "mcp"),
    stdio("node", "/opt/cc-tools/dist/bin/cc-tools.js", "mcp"),
    stdio("npx", "-y", "cc-tools", "mcp"),
    stdio("npx", "cc-tools@0.1.0", "mcp"),
    stdio("pnpm", "dlx", "cc-tools", "mcp"),
    stdio("npm", "exec", "--package=cc-tools", "--", "cc-tools", "mcp"),
    stdio("bunx", "cc-tools", "mcp"),
  ])("%o is cc-tools", (config) => {
    expect(selfInvocation(config, "/")).toBeDefined();
  });

  it.each([
    stdio("npx", "-y", "@modelcontextprotocol/server-everything"),
    stdio("node", "server.js"),
    stdio("uvx", "mcp-server-git"),
    stdio("npx", "cc-tools-plus"),
  ])("%o is another server", (config) => {
    expect(selfInvocation(config, "/")).toBeUndefined();
  });

  it("HTTP servers are recognised by their answer, not their configuration", () => {
    expect(selfInvocation({ type: "http", url: "http://127.0.0.1:3333/mcp" }, "/")).toBeUndefined();
  });
});

describe("the depth marker", () => {
  it("reads CC_TOOLS_MCP_DEPTH, ignoring anything that is not a positive integer", () => {
    expect(mcpDepth({})).toBe(0);
    expect(mcpDepth({ CC_TOOLS_MCP_DEPTH: "2" })).toBe(2);
    expect(mcpDepth({ CC_TOOLS_MCP_DEPTH: "-1" })).toBe(0);
    expect(mcpDepth({ CC_TOOLS_MCP_DEPTH: "x" })).toBe(0);
    expect(depthLimitReason(0)).toBeUndefined();
    expect(depthLimitReason(1)).toContain("CC_TOOLS_MCP_DEPTH=1");
  });

  it("a manager below another cc-tools starts nothing, and says why", async () => {
    const marker = `depth-guard-${process.pid}`;
    const m = new McpClientManager([stdioServer("everything", EVERYTHING, [marker])], {
      cwd: tempDir(),
      env: { CC_TOOLS_MCP_DEPTH: "1" },
    });
    await m.connect();
    expect(m.servers()[0]).toMatchObject({ status: "skipped", toolCount: 0 });
    expect(m.servers()[0]!.reason).toContain("starts no MCP servers of its own");
    expect(await processesMatching(marker)).toEqual([]);
    await expect(m.readResource("everything", "demo://x")).rejects.toThrow(/is not used/);
    await m.close();
  });

  it("every stdio server it starts gets the marker, one level deeper", async () => {
    const m = new McpClientManager(
      [
        {
          name: "env",
          ok: true,
          source: "test",
          config: {
            command: process.execPath,
            args: [EVERYTHING],
            env: { CC_TOOLS_MCP_DEPTH: "0" },
          },
        },
      ],
      { cwd: tempDir(), env: {} },
    );
    const ctx = testContext({ mcpManager: m });
    await m.connect();
    const result = await runTool("mcp__env__get-env", {}, ctx);
    // The configured env cannot reset it: the marker is what stops a chain.
    expect(ToolResult.text(result)).toMatch(/"CC_TOOLS_MCP_DEPTH": "1"/);
    await m.close();
  });
});
