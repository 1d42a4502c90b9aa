import type { ToolDefinition } from "../core/tool.js";
import type { AssistantTurn, Message } from "./messages.js";

/** What streams out of a model while it answers, for hosts that show text as it arrives. */
export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "tool_use_start"; id: string; name: string };

export interface ModelRequest {
  model: string;
  system: string;
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  maxTokens: number;
}

/**
 * A model API behind one interface: the Anthropic Messages API and OpenAI-compatible chat completions
 * (local models through Ollama, vLLM, LM Studio). One call is one attempt: retries are the loop's.
 */
export interface ModelProvider {
  readonly name: string;
  /** Streams one reply; `onEvent` hears text and tool calls as they arrive. Throws ModelError on failure. */
  send(
    request: ModelRequest,
    signal: AbortSignal,
    onEvent?: (event: StreamEvent) => void,
  ): Promise<AssistantTurn>;
}

/** A failed model call, with what the retry policy needs to know. */
export class ModelError extends Error {
  constructor(
    message: string,
    /** The HTTP status, when the API answered. */
    readonly status: number | undefined,
    /** True for failures worth another try: 429, 529, 5xx, a broken or stalled stream. */
    readonly retryable: boolean,
    /** Seconds the API asked us to wait (retry-after), when it said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** Whether an HTTP status is worth retrying: rate limits, overload and server errors. */
export function retryableStatus(status: number | undefined): boolean {
  return (
    status === 408 ||
    status === 409 ||
    status === 429 ||
    status === 529 ||
    (status !== undefined && status >= 500)
  );
}

/** A retry-after header's value in seconds (delta-seconds or an HTTP date), when it has one. */
export function retryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** A ModelError for what an SDK threw: its HTTP status and retry-after, or a broken connection (retryable). */
export function apiError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const e = error as { status?: unknown; headers?: unknown; message?: string };
  const status = typeof e?.status === "number" ? e.status : undefined;
  const header = (name: string): string | null =>
    e?.headers instanceof Headers
      ? e.headers.get(name)
      : ((e?.headers as Record<string, string> | undefined)?.[name] ?? null);
  // Anthropic's and OpenAI's APIs may say it in milliseconds; retry-after is the HTTP standard's seconds.
  const ms = Number(header("retry-after-ms") ?? Number.NaN);
  // No status: the connection failed or broke mid-stream, which is worth another try.
  return new ModelError(
    e?.message ?? String(error),
    status,
    status === undefined || retryableStatus(status),
    Number.isFinite(ms) && ms >= 0 ? ms / 1000 : retryAfterSeconds(header("retry-after")),
  );
}

/**
 * Runs one streamed call under the caller's signal and an idle timer: `tick` on every piece of data; a stream
 * quiet for `idleMs` is aborted and reported as stalled (retryable), a cancelled one as not retryable.
 */
export async function guardedStream<T>(
  signal: AbortSignal,
  idleMs: number,
  run: (signal: AbortSignal, tick: () => void) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  let stalled = false;
  let idle: NodeJS.Timeout | undefined;
  const tick = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      controller.abort("stalled");
    }, idleMs);
  };
  try {
    tick();
    return await run(controller.signal, tick);
  } catch (error) {
    if (signal.aborted) throw new ModelError("the request was cancelled", undefined, false);
    if (stalled) throw new ModelError("the model's stream stalled (no data for too long)", undefined, true);
    throw apiError(error);
  } finally {
    clearTimeout(idle);
    signal.removeEventListener("abort", onAbort);
  }
}
