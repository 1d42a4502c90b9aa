import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { emptySettings } from "../../src/settings/types.js";
import { resourceSubject } from "../../src/tools/mcp/read-resource.js";
import { tempDir, testContext } from "../helpers/context.js";
import { stdioServer } from "./fixtures.js";

const FILE_SERVER = new URL("../fixtures/mcp/file-server.mjs", import.meta.url).pathname;
const DECOY = "decoy-secret-mcp-4417";
const managers: McpClientManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

function setup(mode: "default" | "bypassPermissions") {
  const base = tempDir();
  const dir = join(base, "work");
  const outside = join(base, "outside");
  mkdirSync(dir);
  mkdirSync(outside);
  writeFileSync(join(dir, ".env"), `${DECOY}\n`);
  writeFileSync(join(dir, "readme.txt"), "public words\n");
  writeFileSync(join(outside, "private.txt"), `${DECOY}\n`);
  const config = emptySettings(dir);
  config.rules.push({ rule: "Read(./.env)", behavior: "deny", source: { scope: "project", root: dir } });
  const mcpManager = new McpClientManager([stdioServer("files", FILE_SERVER)], { cwd: dir });
  managers.push(mcpManager);
  const ctx = testContext({ workingDir: dir, config, mcpManager, permissionMode: mode });
  const read = async (path: string) =>
    runTool("ReadMcpResource", { server: "files", uri: pathToFileURL(path).href }, ctx);
  return { dir, outside, read };
}

describe("ReadMcpResource judges file:// URIs as reads of those files", () => {
  it("a Read deny rule holds, even in bypassPermissions mode", async () => {
    const { dir, read } = setup("bypassPermissions");
    const result = await read(join(dir, ".env"));
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("denied");
    expect(ToolResult.text(result)).not.toContain(DECOY);
  });

  it("a file outside the workspace asks (and nobody can answer here)", async () => {
    const { outside, read } = setup("default");
    const result = await read(join(outside, "private.txt"));
    expect(ToolResult.text(result)).not.toContain(DECOY);
    expect(ToolResult.text(result)).toContain("outside the workspace");
  });

  it("a file inside the workspace is read", async () => {
    const { dir, read } = setup("default");
    expect(ToolResult.text(await read(join(dir, "readme.txt")))).toContain("public words");
  });

  it("maps URIs to the path they name", () => {
    expect(resourceSubject("file:///a/b%20c.txt")).toEqual({
      kind: "path",
      path: "/a/b c.txt",
      access: "read",
    });
    expect(resourceSubject("FILE:///a/../etc/passwd")).toEqual({
      kind: "path",
      path: "/etc/passwd",
      access: "read",
    });
    expect(resourceSubject("file://otherhost/x")).toEqual({ kind: "path", path: "/", access: "read" });
    expect(resourceSubject("demo://resource/1")).toEqual({ kind: "none" });
  });
});
