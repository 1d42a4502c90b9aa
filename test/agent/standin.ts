import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for the Anthropic Messages API (and OpenAI chat completions) that replays scripted
 * replies as real server-sent event streams, and records every request it was sent.
 */

export type Block =
  | { type: "text"; text: string }
  | {
      type: "tool_use";
      id: string;
      name: string;
      input: unknown;
      /** The arguments exactly as streamed, instead of `input` as JSON (a model that writes broken JSON). */
      rawInput?: string;
    };

export interface Reply {
  content: Block[];
  stop_reason?: "end_turn" | "tool_use" | "max_tokens";
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Wait this long between events (a slow model). */
  delayMs?: number;
  /** End the stream after the content, without message_delta and message_stop (a connection cut short). */
  truncated?: boolean;
}

/** An HTTP failure (429, 529, 500…) with optional headers. */
export interface Failure {
  status: number;
  headers?: Record<string, string>;
  message?: string;
}

/** Sends the first events and then nothing more: a stalled stream. */
export interface Stall {
  stall: true;
}

type Served = Reply | Failure | Stall;
// biome-ignore lint/suspicious/noExplicitAny: requests are whatever JSON the client sent.
export type Step = Served | ((request: any) => Served | Promise<Served>);

function sse(res: ServerResponse, event: string, data: unknown) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function streamAnthropic(res: ServerResponse, reply: Reply, model: string, estimate: number) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const usage = reply.usage ?? {};
  sse(res, "message_start", {
    type: "message_start",
    message: {
      id: `msg_${Math.random().toString(36).slice(2)}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      usage: {
        input_tokens: usage.input_tokens ?? estimate,
        output_tokens: 1,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
      },
    },
  });
  for (const [index, block] of reply.content.entries()) {
    if (reply.delayMs) await wait(reply.delayMs);
    if (block.type === "text") {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      });
      // In two pieces, as real streams split text.
      const half = Math.ceil(block.text.length / 2);
      for (const piece of [block.text.slice(0, half), block.text.slice(half)]) {
        if (piece)
          sse(res, "content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text: piece },
          });
      }
    } else {
      sse(res, "content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      const json = block.rawInput ?? JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      for (const piece of [json.slice(0, half), json.slice(half)]) {
        if (piece)
          sse(res, "content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: piece },
          });
      }
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
  }
  if (reply.truncated) return void res.end();
  const stop =
    reply.stop_reason ?? (reply.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  sse(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: stop },
    usage: { output_tokens: usage.output_tokens ?? 20 },
  });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

async function streamOpenAI(res: ServerResponse, reply: Reply, model: string, estimate: number) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: unknown, finish: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  let calls = 0;
  for (const block of reply.content) {
    if (block.type === "text") chunk({ role: "assistant", content: block.text });
    else {
      const json = block.rawInput ?? JSON.stringify(block.input);
      chunk({
        tool_calls: [
          {
            index: calls,
            id: block.id,
            type: "function",
            function: { name: block.name, arguments: json.slice(0, 3) },
          },
        ],
      });
      chunk({ tool_calls: [{ index: calls, function: { arguments: json.slice(3) } }] });
      calls++;
    }
  }
  if (reply.truncated) return void res.end();
  const finish = reply.stop_reason === "max_tokens" ? "length" : calls > 0 ? "tool_calls" : "stop";
  chunk({}, finish);
  const usage = reply.usage ?? {};
  res.write(
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model, choices: [], usage: { prompt_tokens: usage.input_tokens ?? estimate, completion_tokens: usage.output_tokens ?? 20, total_tokens: 120 } })}\n\n`,
  );
  res.write("data: [DONE]\n\n");
  res.end();
}

export interface StandIn {
  url: string;
  // biome-ignore lint/suspicious/noExplicitAny: recorded request bodies.
  requests: any[];
  /** Steps not yet served. */
  remaining(): number;
  close(): Promise<void>;
}

/** Starts the stand-in; each request takes the next step (the last one repeats when the script runs out). */
export async function startStandIn(steps: Step[]): Promise<StandIn> {
  const requests: unknown[] = [];
  let next = 0;
  const open = new Set<ServerResponse>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body || "{}");
    requests.push(request);
    const step = steps[Math.min(next++, steps.length - 1)]!;
    const resolved = typeof step === "function" ? await step(request) : step;
    const openai = req.url?.includes("/chat/completions") ?? false;
    if ("status" in resolved) {
      res.writeHead(resolved.status, { "content-type": "application/json", ...resolved.headers });
      res.end(
        JSON.stringify({
          type: "error",
          error: {
            type: resolved.status === 529 ? "overloaded_error" : "api_error",
            message: resolved.message ?? `status ${resolved.status}`,
          },
        }),
      );
      return;
    }
    if ("stall" in resolved) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { model: request.model, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
      );
      open.add(res);
      return;
    }
    // Like a real API, report about as many input tokens as the request holds (4 characters a token).
    const estimate = Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
    if (openai) await streamOpenAI(res, resolved, request.model, estimate);
    else await streamAnthropic(res, resolved, request.model, estimate);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: requests as never[],
    remaining: () => Math.max(0, steps.length - next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const text = (t: string, usage?: Reply["usage"]): Reply => ({
  content: [{ type: "text", text: t }],
  usage,
});
export const toolCall = (
  name: string,
  input: unknown,
  id = `toolu_${Math.random().toString(36).slice(2, 10)}`,
): Reply => ({
  content: [{ type: "tool_use", id, name, input }],
});
