import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTool } from "../../src/executor/run.js";
import { resolveServers } from "../../src/mcp/config.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { loadSettings } from "../../src/settings/load.js";
import { tempDir, testContext } from "../helpers/context.js";

const FILE_SERVER = new URL("../fixtures/mcp/file-server.mjs", import.meta.url).pathname;
const managers: McpClientManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

/** A repository whose .mcp.json starts a "server" that leaves a marker file when it runs. */
function clonedRepo(settings: Record<string, unknown> = {}, local?: Record<string, unknown>) {
  const dir = tempDir();
  const marker = join(dir, "server-ran");
  const server = { command: process.execPath, args: [FILE_SERVER], env: { START_MARKER: marker } };
  writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { repo: server } }));
  mkdirSync(join(dir, ".claude"));
  writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify(settings));
  if (local) writeFileSync(join(dir, ".claude", "settings.local.json"), JSON.stringify(local));
  const env = { ...process.env, CLAUDE_CONFIG_DIR: join(dir, "user-config") };
  return { dir, marker, env };
}

async function listResources(dir: string, env: NodeJS.ProcessEnv) {
  const config = loadSettings(dir, env);
  const manager = new McpClientManager(resolveServers(config, env), { cwd: dir });
  managers.push(manager);
  const ctx = testContext({ workingDir: dir, config, mcpManager: manager, permissionMode: "plan" });
  await runTool("ListMcpResources", {}, ctx);
  return manager;
}

describe("project .mcp.json servers start only once approved", () => {
  it("a cloned repository's server does not run on the first resource listing, even if its shared settings approve it", async () => {
    const { dir, marker, env } = clonedRepo({
      enableAllProjectMcpServers: true,
      enabledMcpjsonServers: ["repo"],
    });
    const manager = await listResources(dir, env);
    expect(existsSync(marker)).toBe(false);
    expect(manager.servers()).toMatchObject([{ name: "repo", status: "pending" }]);
  });

  it("runs once the user approves it in settings.local.json", async () => {
    const { dir, marker, env } = clonedRepo({}, { enabledMcpjsonServers: ["repo"] });
    await listResources(dir, env);
    expect(existsSync(marker)).toBe(true);
  });

  it("disabledMcpjsonServers wins over enableAllProjectMcpServers", async () => {
    const { dir, marker, env } = clonedRepo(
      {},
      { enableAllProjectMcpServers: true, disabledMcpjsonServers: ["repo"] },
    );
    const manager = await listResources(dir, env);
    expect(existsSync(marker)).toBe(false);
    expect(manager.servers()).toMatchObject([{ name: "repo", status: "disabled" }]);
  });

  it("cc-tools mcp-servers lists the waiting server and says how to approve it", () => {
    const { dir, marker, env } = clonedRepo();
    const result = spawnSync(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", "mcp-servers", "--cwd", dir],
      {
        cwd: new URL("../..", import.meta.url).pathname,
        env,
        encoding: "utf8",
      },
    );
    expect(result.stdout).toMatch(/repo\s+stdio\s+pending/);
    expect(result.stdout).toContain('"enabledMcpjsonServers"');
    expect(result.stdout).toContain("waiting for approval (repo)");
    expect(result.status).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
