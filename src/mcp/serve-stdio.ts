import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import {
  type ContextFactory,
  createToolSession,
  type ToolSession,
  type ToolSessionOptions,
} from "./server.js";
import type { StdioConnection } from "./stdio-connection.js";

/** Longest shutdown may take (killing jobs, closing MCP clients) before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Serves the tools over stdin/stdout until the connection closes (the client closed stdin and its requests
 * were answered, or the drain time ran out) or a signal arrives; then every session is disposed, so
 * running calls and background jobs die with the connection, and the process exits.
 */
export async function serveToolsOverStdio(
  makeContext: ContextFactory,
  manager: McpManager | undefined,
  transport: StdioConnection,
  sessionOptions: () => ToolSessionOptions = () => ({}),
) {
  const sessions = new Set<ToolSession>();
  const handle = serveStdio(
    () => {
      const session = createToolSession(makeContext, manager, sessionOptions());
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
  void transport.whenClosed.then(() => stop("stdin closed"));
  process.stdout.once("error", () => void stop("stdout closed"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGHUP", () => void stop("SIGHUP"));
}
