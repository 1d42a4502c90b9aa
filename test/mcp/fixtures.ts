import { fileURLToPath } from "node:url";
import type { ResolvedServer } from "../../src/mcp/config.js";

export const EVERYTHING = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
export const CRASHING = fileURLToPath(new URL("../fixtures/mcp/crashing-server.mjs", import.meta.url));
export const SILENT = fileURLToPath(new URL("../fixtures/mcp/silent-server.mjs", import.meta.url));

export function stdioServer(
  name: string,
  script: string,
  args: string[] = [],
  env?: Record<string, string>,
): ResolvedServer {
  return {
    name,
    ok: true,
    source: "test",
    config: { command: process.execPath, args: [script, ...args], env },
  };
}

/** Pids of live processes whose command line contains `needle` (real `ps`, as a user would check). */
export async function processesMatching(needle: string): Promise<number[]> {
  const { execFileSync } = await import("node:child_process");
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(needle) && !line.includes("ps -eo"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Polls `check` until it returns true or `timeoutMs` passes; for waiting on real processes, not timing. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}
