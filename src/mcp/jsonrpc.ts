/**
 * The JSON-RPC 2.0 envelope every message must have, checked before a message reaches the opening or the
 * SDK (which drops some malformed requests without a word). A request that breaks it is answered with the
 * error the spec names: -32600 Invalid Request for the envelope, -32602 Invalid params for positional
 * params (every MCP method takes named ones). This module must stay light: stdio loads it first.
 */

export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;

type Id = string | number | null;

export interface EnvelopeError {
  jsonrpc: "2.0";
  id: Id;
  error: { code: number; message: string };
}

/** An id MCP allows: a string or an integer (JSON-RPC discourages fractions; MCP forbids null). */
export function isValidId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

/**
 * What is wrong with the `_meta` of a message's params, which every MCP message may carry: it must be an
 * object, and a progress token in it a string or an integer. The SDK drops a request that breaks this
 * without an answer, so it is answered here.
 */
function requestMetaProblem(params: Record<string, unknown>): string | undefined {
  if (!("_meta" in params)) return undefined;
  const meta = params._meta;
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) {
    return `"_meta" must be an object, not ${JSON.stringify(meta)}.`;
  }
  const token = (meta as Record<string, unknown>).progressToken;
  if (token !== undefined && !isValidId(token)) {
    return `"_meta.progressToken" must be a string or an integer, not ${JSON.stringify(token)}.`;
  }
  return undefined;
}

/**
 * The error answer for `message` (a parsed JSON object), or undefined when its envelope is sound. A
 * notification (no id) with an otherwise sound envelope is never answered, as JSON-RPC requires; its
 * problem is returned with `notify: false` so the caller can log it.
 */
export function envelopeError(
  message: Record<string, unknown>,
): (EnvelopeError & { answer: boolean }) | undefined {
  const hasId = "id" in message;
  const id: Id = isValidId(message.id) ? message.id : null;
  const fail = (code: number, text: string, answer = true) => ({
    jsonrpc: "2.0" as const,
    id,
    error: { code, message: text },
    answer,
  });
  if (message.jsonrpc !== "2.0") {
    return fail(
      INVALID_REQUEST,
      `Invalid Request: "jsonrpc" must be "2.0", not ${JSON.stringify(message.jsonrpc) ?? "missing"}.`,
    );
  }
  if (hasId && !isValidId(message.id)) {
    return fail(
      INVALID_REQUEST,
      `Invalid Request: "id" must be a string or an integer, not ${JSON.stringify(message.id)}.`,
    );
  }
  if (!("method" in message)) {
    // A response to a request of ours: it needs an id and a result or an error.
    if (hasId && ("result" in message || "error" in message)) return undefined;
    return fail(
      INVALID_REQUEST,
      'Invalid Request: a message needs a "method" (or, as a response, a "result" or an "error").',
    );
  }
  if ("result" in message || "error" in message) {
    return fail(
      INVALID_REQUEST,
      'Invalid Request: a message is a request (with a "method") or a response (with a "result" or an "error"), not both.',
      hasId,
    );
  }
  if (typeof message.method !== "string") {
    return fail(
      INVALID_REQUEST,
      `Invalid Request: "method" must be a string, not ${JSON.stringify(message.method)}.`,
    );
  }
  if ("params" in message) {
    const { params } = message;
    if (Array.isArray(params)) {
      return fail(
        INVALID_PARAMS,
        `Invalid params: ${message.method} takes named parameters (an object), not an array.`,
        hasId,
      );
    }
    if (params === null || typeof params !== "object") {
      return fail(
        INVALID_REQUEST,
        `Invalid Request: "params" must be an object, not ${JSON.stringify(params)}.`,
      );
    }
    const metaProblem = requestMetaProblem(params as Record<string, unknown>);
    if (metaProblem) return fail(INVALID_PARAMS, `Invalid params: ${metaProblem}`, hasId);
  }
  return undefined;
}
