import { log } from "../core/log.js";
import { isValidId } from "./jsonrpc.js";
import { isObject, type JsonRpcId, type Message, type MessageRouter } from "./stdio-connection.js";

/**
 * tools/call served straight from the stdio connection, without the MCP SDK's dispatch.
 *
 * The SDK's way from a request's line to our handler and back costs about half a millisecond per call:
 * its message queue, era checks and context building, the request validated against the tools/call schema
 * twice, and the result validated against the result schema, each step behind a promise of its own. On a
 * small Read that is a quarter of the call (docs/PERFORMANCE.md, "The SDK's dispatch, skipped for plain
 * calls"). A plain tools/call of a 2025 revision needs none of it: its parameters are a name, an object of
 * arguments and `_meta`, and its answer is the result our own code built. So the connection hands such calls to the session directly,
 * and the SDK keeps everything else: the opening, tools/list, pings, notifications, requests to the
 * client (elicitation), and every call that is not plain, which it answers as it always did.
 *
 * Calls run in the order they arrive (a Read before an Edit): while a call the SDK was given has not been
 * answered, later calls go to the SDK too, behind it, so the two ways never overtake each other.
 */

/** The parameters of a tools/call the session may serve directly. */
export interface PlainCall {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What a session offers the direct way. */
export interface DirectSession {
  /** Whether calls may be served directly now: a 2025 revision was negotiated at initialize. */
  servesDirect(): boolean;
  /** Serves one call to its result; `signal` aborts when the client cancels it. */
  callDirect(id: JsonRpcId, params: PlainCall, signal: AbortSignal): Promise<unknown>;
}

const PLAIN_PARAMS = new Set(["name", "arguments", "_meta"]);
/** The `_meta` keys a 2026-07-28 request's envelope and rounds use: such a request is the SDK's. */
const RESERVED_META_PREFIX = "io.modelcontextprotocol/";

/**
 * The parameters of `message` when it is a tools/call request the SDK would take as it is: a string name,
 * arguments that are an object (or none), `_meta` that is an object with a valid progress token (or none)
 * and none of the 2026-07-28 keys, and nothing else. Anything else is left to the SDK, which answers it
 * as it always did (an invalid one with its -32602 error).
 */
export function plainToolsCall(message: Message): PlainCall | undefined {
  if (message.method !== "tools/call" || message.id === undefined || message.id === null) return undefined;
  // Also a response, to the SDK (which treats it as one): refused before this by the envelope check.
  if ("result" in message || "error" in message) return undefined;
  const params = message.params;
  if (!isObject(params) || typeof params.name !== "string") return undefined;
  for (const key of Object.keys(params)) if (!PLAIN_PARAMS.has(key)) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isObject(meta)) return undefined;
    if (meta.progressToken !== undefined && !isValidId(meta.progressToken)) return undefined;
    for (const key of Object.keys(meta)) if (key.startsWith(RESERVED_META_PREFIX)) return undefined;
  }
  return params as unknown as PlainCall;
}

/** The JSON-RPC error code the SDK answers a handler's failure with, when the failure names none. */
const INTERNAL_ERROR = -32603;

/**
 * The router a stdio connection consults before the SDK (StdioConnection.router): it serves plain calls
 * through the session given to serve(), and cancels them on the client's notifications/cancelled.
 */
export class DirectCalls implements MessageRouter {
  private session: DirectSession | undefined;
  /** Direct calls running, each with the controller that the client's cancellation aborts. */
  private readonly running = new Map<JsonRpcId, AbortController>();
  /** tools/call requests passed to the SDK and not yet answered: calls after them go the same way. */
  private readonly withSdk = new Set<JsonRpcId>();

  constructor(
    /** Writes an answer to the client. */
    private readonly send: (message: Message) => Promise<void>,
  ) {}

  /** The session to serve calls with (the connection's 2025-revision one); none until then. */
  serve(session: DirectSession): void {
    this.session = session;
  }

  take(message: Message): boolean {
    if (message.method === "notifications/cancelled") return this.cancel(message);
    // A tools/call without an id is a notification, which the SDK ignores: nothing waits for it.
    if (message.method !== "tools/call" || message.id === undefined || message.id === null) return false;
    const id = message.id;
    const params = this.withSdk.size === 0 ? plainToolsCall(message) : undefined;
    const session = this.session;
    if (!params || !session?.servesDirect() || this.running.has(id)) {
      this.withSdk.add(id);
      return false;
    }
    const controller = new AbortController();
    this.running.set(id, controller);
    void session
      .callDirect(id, params, controller.signal)
      .then(
        (result) => ({ jsonrpc: "2.0", id, result }),
        (error: { code?: unknown; message?: unknown; data?: unknown }) => {
          log.debug(`tools/call ${String(id)} failed`, error);
          const code = Number.isSafeInteger(error?.code) ? (error.code as number) : INTERNAL_ERROR;
          const text = typeof error?.message === "string" ? error.message : "Internal error";
          return {
            jsonrpc: "2.0",
            id,
            error: { code, message: text, ...(error?.data !== undefined ? { data: error.data } : {}) },
          };
        },
      )
      .then((answer) => {
        if (this.running.get(id) === controller) this.running.delete(id);
        // A cancelled request is not answered (MCP), as the SDK does for its own.
        if (!controller.signal.aborted) return this.send(answer as Message);
      })
      .catch((error) => log.debug("could not send a tools/call answer", error));
    return true;
  }

  answered(id: JsonRpcId): void {
    this.withSdk.delete(id);
  }

  /**
   * Cancels a direct call the notification names (taken); any other is the SDK's. A notification the SDK
   * would refuse (its schema: a string or integer `requestId`, a string `reason` or none) changes nothing
   * here either: it cancels nothing, and calls given to the SDK are still waited for.
   */
  private cancel(message: Message): boolean {
    const params = message.params;
    if (!isObject(params) || !isValidId(params.requestId)) return false;
    if (params.reason !== undefined && typeof params.reason !== "string") return false;
    const { requestId, reason } = params as { requestId: JsonRpcId; reason?: string };
    const controller = this.running.get(requestId);
    if (!controller) {
      // A request the SDK was given is cancelled: it will not be answered, so calls need not wait for it.
      this.withSdk.delete(requestId);
      return false;
    }
    this.running.delete(requestId);
    controller.abort(reason);
    return true;
  }
}
