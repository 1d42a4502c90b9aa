import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import { DirectCalls } from "./direct-calls.js";
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
 * Serves tool sessions over a stdio connection through the SDK's stdio entry, which picks the protocol
 * revision and pins one session to the connection; a 2025-revision session's plain calls are served
 * without the SDK's dispatch (src/mcp/direct-calls.ts). `sessions` holds every session made.
 */
export function serveSessions(transport: StdioConnection, newSession: () => ToolSession) {
  const sessions = new Set<ToolSession>();
  const direct = new DirectCalls((message) => transport.send(message));
  transport.router = direct;
  const handle = serveStdio(
    ({ era }) => {
      const session = newSession();
      sessions.add(session);
      if (era === "legacy") direct.serve(session);
      return session.server;
    },
    { transport, onerror: (error) => log.debug("MCP stdio transport error", error) },
  );
  return { sessions, close: () => handle.close() };
}

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
  const { sessions, ...handle } = serveSessions(transport, () =>
    createToolSession(makeContext, manager, sessionOptions()),
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
