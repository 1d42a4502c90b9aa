import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  localhostHostValidation,
  localhostOriginValidation,
  NodeStreamableHTTPServerTransport,
} from "@modelcontextprotocol/node";
import { isInitializeRequest } from "@modelcontextprotocol/server";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import { PostOffice } from "./post-office.js";
import {
  type ContextFactory,
  createToolSession,
  type ToolSession,
  type ToolSessionOptions,
} from "./server.js";

/** Largest request body accepted; tools/call limits its arguments further. */
export const MAX_HTTP_BODY_BYTES = 16 * 1024 * 1024;

export const MCP_PATH = "/mcp";

/**
 * An HTTP session nobody has used for this long (no request, no open stream) is closed, killing its
 * background jobs: a client that died never says goodbye with DELETE.
 */
export const HTTP_SESSION_IDLE_MS = 30 * 60_000;

/** JSON-RPC's code for a body that is not JSON; other transport-level refusals use the generic server code. */
const PARSE_ERROR = -32700;

/** Longest pause between checks for idle sessions. */
const SESSION_SWEEP_MAX_MS = 60_000;
const SERVER_ERROR = -32000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.startsWith("127.");
}

export interface HttpOptions {
  host: string;
  port: number;
  /** Bearer token every request must carry; required when the host is not loopback. */
  token?: string;
  /** Idle time after which a session is closed; HTTP_SESSION_IDLE_MS by default. */
  sessionIdleMs?: number;
  /** Per-connection session options (a named session to restore and save). */
  sessionOptions?: () => ToolSessionOptions;
}

/** One MCP session over HTTP, with what tells whether its client is still around. */
interface HttpSession {
  transport: NodeStreamableHTTPServerTransport;
  session: ToolSession;
  /** Responses (POST answers, the GET stream) still open to the client. */
  openResponses: number;
  lastActive: number;
}

function sendJsonError(
  res: ServerResponse,
  status: number,
  message: string,
  { headers = {}, code = SERVER_ERROR }: { headers?: Record<string, string>; code?: number } = {},
) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Ids of the tools/call requests in a POST body (one message or a batch). */
function toolCallIds(body: unknown): Array<string | number> {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const { method, id } = (m ?? {}) as { method?: unknown; id?: unknown };
    return method === "tools/call" && (typeof id === "string" || typeof id === "number") ? [id] : [];
  });
}

function tokenMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readBody(
  req: IncomingMessage,
): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string; code?: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_HTTP_BODY_BYTES) {
      return { ok: false, status: 413, message: `Request body over ${MAX_HTTP_BODY_BYTES} bytes.` };
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return {
      ok: false,
      status: 400,
      code: PARSE_ERROR,
      message: "Parse error: the request body is not valid JSON; send one JSON-RPC message per POST.",
    };
  }
}

/**
 * Serves the tools over Streamable HTTP at /mcp. Each MCP session (one `initialize`) gets its own tool
 * session; it ends when the client deletes it, after HTTP_SESSION_IDLE_MS unused, or when the server stops.
 */
export async function serveToolsOverHttp(
  makeContext: ContextFactory,
  manager: McpManager | undefined,
  options: HttpOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, HttpSession>();
  const postOffice = new PostOffice();
  const idleMs = options.sessionIdleMs ?? HTTP_SESSION_IDLE_MS;
  const loopback = isLoopback(options.host);
  // DNS-rebinding guards only make sense for loopback: a page in a browser could otherwise reach us.
  const validateHost = loopback ? localhostHostValidation() : undefined;
  const validateOrigin = loopback ? localhostOriginValidation() : undefined;

  const startSession = async () => {
    // Every connection of this server can message the others (SendMessage).
    const session = createToolSession(makeContext, manager, { postOffice, ...options.sessionOptions?.() });
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, session, openResponses: 0, lastActive: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void session.dispose();
    };
    await session.server.connect(transport);
    return transport;
  };

  /**
   * Passes a request to its session, noting the client is alive. This server keeps no event store, so an
   * answer whose stream closed early can never be delivered: the calls it carried are cancelled, which
   * kills their processes, instead of running on for nobody.
   */
  const serveInSession = (entry: HttpSession, req: IncomingMessage, res: ServerResponse, body?: unknown) => {
    entry.openResponses++;
    entry.lastActive = Date.now();
    res.once("close", () => {
      entry.openResponses--;
      entry.lastActive = Date.now();
      if (res.writableFinished) return;
      for (const id of toolCallIds(body))
        entry.session.cancel(id, "the client disconnected before the answer");
    });
    return entry.transport.handleRequest(req, res, body);
  };

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, entry] of sessions) {
        if (entry.openResponses > 0 || now - entry.lastActive < idleMs) continue;
        log.debug(`closing MCP HTTP session ${id}: idle for ${idleMs} ms`);
        sessions.delete(id);
        void entry.transport.close().finally(() => entry.session.dispose());
      }
    },
    Math.min(idleMs, SESSION_SWEEP_MAX_MS),
  );
  sweep.unref();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== MCP_PATH) return sendJsonError(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}.`);
    if (options.token && !tokenMatches(req, options.token)) {
      return sendJsonError(
        res,
        401,
        "Unauthorized: send the server's token as 'Authorization: Bearer <token>'.",
        { headers: { "www-authenticate": 'Bearer realm="cc-tools"' } },
      );
    }
    if (validateHost && !validateHost(req, res)) return;
    if (validateOrigin && !validateOrigin(req, res)) return;

    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (req.method !== "POST") {
      if (!existing) return sendJsonError(res, sessionId ? 404 : 400, "Unknown or missing Mcp-Session-Id.");
      return serveInSession(existing, req, res);
    }
    const parsed = await readBody(req);
    if (!parsed.ok) return sendJsonError(res, parsed.status, parsed.message, { code: parsed.code });
    if (existing) return serveInSession(existing, req, res, parsed.body);
    if (sessionId)
      return sendJsonError(res, 404, "Unknown Mcp-Session-Id: the session ended; initialize a new one.");
    if (!isInitializeRequest(parsed.body)) {
      return sendJsonError(res, 400, "No Mcp-Session-Id: start with an initialize request.");
    }
    const transport = await startSession();
    return transport.handleRequest(req, res, parsed.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      log.error("MCP HTTP request failed", error);
      sendJsonError(res, 500, "Internal error.");
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolvePromise());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const hostForUrl =
    options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostForUrl}:${port}${MCP_PATH}`,
    async close() {
      clearInterval(sweep);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(
        open.map(({ transport, session }) => transport.close().then(() => session.dispose())),
      );
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
  };
}
