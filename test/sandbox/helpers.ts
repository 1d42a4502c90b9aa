import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import type { ToolContextOptions } from "../../src/context.js";
import type { ToolContext } from "../../src/core/context.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import type { PermissionRuleEntry } from "../../src/permissions/types.js";
import { emptySettings, type SandboxSettings, type Settings } from "../../src/settings/types.js";
import { testContext } from "../helpers/context.js";

/** Settings with a sandbox block and rules, as loadSettings would produce them for `workingDir`. */
export function sandboxSettings(
  workingDir: string,
  sandbox: Partial<SandboxSettings> = {},
  rules: Array<[PermissionRuleEntry["behavior"], string]> = [],
  extra: Partial<Settings> = {},
): Settings {
  const config = emptySettings(workingDir);
  config.sandbox = { ...config.sandbox, ...sandbox };
  config.rules = rules.map(([behavior, rule]) => ({
    rule,
    behavior,
    source: { scope: "project" as const, root: workingDir },
  }));
  return { ...config, ...extra };
}

export function sandboxContext(
  workingDir: string,
  config: Settings,
  options: Partial<ToolContextOptions> = {},
) {
  return testContext({ workingDir, config, ...options });
}

/**
 * One turn of the event loop: a sandboxed command's placeholders are removed then, once its result is on
 * its way (src/sandbox/placeholder.ts).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function bash(ctx: ToolContext, command: string, extra: Record<string, unknown> = {}) {
  const result = await runTool("Bash", { command, ...extra }, ctx);
  return { result, text: ToolResult.text(result) };
}

const servers: Server[] = [];
afterEach(async () => {
  while (servers.length > 0) {
    const server = servers.pop()!;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** An HTTP server on a loopback address that records every request it gets. */
export async function loopbackServer(host: string, body = "hello from the host") {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.address() as AddressInfo).port, requests };
}
