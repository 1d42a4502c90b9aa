import type { Transport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import { type ContextFactory, createToolSession, type ToolSession } from "./server.js";

/** Longest shutdown may take (killing jobs, closing MCP clients) before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Serves the tools over stdin/stdout until the client closes stdin (or a signal arrives); then every session
 * is disposed, so background jobs die with the connection, and the process exits.
 */
export async function serveToolsOverStdio(
  makeContext: ContextFactory,
  manager: McpManager | undefined,
  transport: Transport,
) {
  const sessions = new Set<ToolSession>();
  const handle = serveStdio(
    () => {
      const session = createToolSession(makeContext, manager);
      sessions.add(session);
      return session.server;
    },
    { transport, onerror: (error) => log.debug("MCP stdio transport error", error) },
  );

  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.debug(`MCP server stopping: ${reason}`);
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    await Promise.allSettled([...sessions].map((s) => s.dispose()));
    await Promise.allSettled([handle.close(), manager?.close()]);
    process.exit(0);
  };
  process.stdin.once("end", () => void stop("stdin closed"));
  process.stdin.once("close", () => void stop("stdin closed"));
  process.stdout.once("error", () => void stop("stdout closed"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGHUP", () => void stop("SIGHUP"));
}
