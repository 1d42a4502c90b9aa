import { readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { log } from "../core/log.js";

/**
 * The stdio side of `cc-tools mcp`: newline-delimited JSON-RPC on stdin/stdout, shaped as an MCP SDK
 * transport. It can answer a client's opening (initialize, then tools/list) from data computed at build
 * time, before the SDK and the tools are even loaded; when the SDK server attaches (`start()`), the
 * opening is replayed to it, its duplicate answers are dropped, and from then on every message passes
 * straight through. So a client gets the tool list in the time Node takes to start, and the SDK stays the
 * one implementation of the protocol.
 *
 * This module must stay light: it is loaded before anything else of the server.
 */

type JsonRpcId = string | number;
type Message = {
  jsonrpc?: string;
  id?: JsonRpcId | null;
  method?: string;
  params?: Record<string, unknown>;
} & Record<string, unknown>;

/** What the opening is answered with; written next to the bundle by the build (scripts/postbuild.mjs). */
export interface OpeningData {
  /** Protocol versions the SDK answers initialize with unchanged (2025-era, newest first). */
  protocolVersions: string[];
  capabilities: unknown;
  serverInfo: unknown;
  instructions: string;
  /** The built-in tools exactly as tools/list returns them. */
  tools: unknown[];
}

/** The opening data the build wrote beside the bundle; undefined when running unbundled (tests, tsx). */
export function readOpening(): OpeningData | undefined {
  try {
    return JSON.parse(readFileSync(new URL("./mcp-opening.json", import.meta.url), "utf8")) as OpeningData;
  } catch {
    return undefined;
  }
}

/** Largest single frame accepted from the client; a larger one is refused with an error, not buffered forever. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** After answering initialize, how long to wait for tools/list before loading the server anyway. */
export const OPENING_IDLE_MS = 50;

/** The subset of the MCP SDK's Transport interface the server uses. */
export interface MessageTransport {
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  start(): Promise<void>;
  send(message: Message): Promise<void>;
  close(): Promise<void>;
}

export class StdioConnection implements MessageTransport {
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /** Resolves when the server should be loaded: the opening is answered, or a message needs the server. */
  readonly needsServer: Promise<void>;
  private signalNeedsServer!: () => void;
  private readonly decoder = new StringDecoder("utf8");
  private buffered = "";
  private attached = false;
  private closed = false;
  /** Messages read before the server attached, replayed to it in order. */
  private readonly backlog: Message[] = [];
  /** Requests the opening already answered, with the result sent: the server's own answers are dropped. */
  private readonly answered = new Map<JsonRpcId, string>();
  private initializeAnswered = false;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly opening: OpeningData | undefined,
  ) {
    this.needsServer = new Promise((resolve) => {
      this.signalNeedsServer = resolve;
    });
    if (!opening) this.signalNeedsServer();
    input.on("data", this.onData);
    input.on("end", this.onEnd);
    input.on("error", (error: Error) => this.onerror?.(error));
    output.on("error", (error: Error) => this.onerror?.(error));
  }

  private readonly onData = (chunk: Buffer | string) => {
    this.buffered += typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let newline = this.buffered.indexOf("\n");
    while (newline !== -1) {
      const line = this.buffered.slice(0, newline).replace(/\r$/, "");
      this.buffered = this.buffered.slice(newline + 1);
      if (line.trim() !== "") this.receive(line);
      newline = this.buffered.indexOf("\n");
    }
    if (Buffer.byteLength(this.buffered) > MAX_FRAME_BYTES) {
      this.buffered = "";
      this.write({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `A message was larger than ${MAX_FRAME_BYTES} bytes and was dropped.`,
        },
      });
    }
  };

  private readonly onEnd = () => {
    void this.close();
  };

  private receive(line: string): void {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      // JSON-RPC says a parse error is answered with id null; the connection stays usable.
      this.write({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error: a line was not JSON." },
      });
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      this.write({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid request: not an object." },
      });
      return;
    }
    if (this.attached) {
      this.onmessage?.(message);
      return;
    }
    this.backlog.push(message);
    this.answerOpening(message);
  }

  /** Answers initialize and the first tools/list from the opening data; anything else needs the server. */
  private answerOpening(message: Message): void {
    const { opening } = this;
    const id = message.id;
    if (!opening || id === undefined || id === null) {
      if (message.method !== "notifications/initialized") this.signalNeedsServer();
      return;
    }
    const version = message.params?.protocolVersion;
    if (
      message.method === "initialize" &&
      !this.initializeAnswered &&
      opening.protocolVersions.includes(version as string)
    ) {
      this.initializeAnswered = true;
      const { capabilities, serverInfo, instructions } = opening;
      const result = { protocolVersion: version, capabilities, serverInfo, instructions };
      this.answered.set(id, JSON.stringify(result));
      this.write({ jsonrpc: "2.0", id, result });
      this.idleTimer = setTimeout(() => this.signalNeedsServer(), OPENING_IDLE_MS);
      return;
    }
    if (message.method === "tools/list" && this.initializeAnswered && message.params?.cursor === undefined) {
      this.backlog.pop(); // answered for good; the server need not see it
      this.write({ jsonrpc: "2.0", id, result: { tools: opening.tools } });
    }
    clearTimeout(this.idleTimer);
    this.signalNeedsServer();
  }

  /** Called by the SDK when the server attaches: the backlog is replayed, then messages flow through. */
  async start(): Promise<void> {
    if (this.attached) return;
    this.attached = true;
    clearTimeout(this.idleTimer);
    for (const message of this.backlog.splice(0)) this.onmessage?.(message);
    if (this.closed) this.onclose?.();
  }

  async send(message: Message): Promise<void> {
    const id = message.id;
    const isResponse = id !== undefined && id !== null && message.method === undefined;
    if (isResponse && this.answered.has(id)) {
      // The build-time answer must be what the server itself says; a difference means a stale build.
      if (JSON.stringify(message.result) !== this.answered.get(id)) {
        log.warn(
          "the MCP opening answered initialize differently from the server; rebuild with npm run build",
        );
      }
      this.answered.delete(id);
      return;
    }
    await this.write(message);
  }

  private write(message: Message): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.input.removeListener("data", this.onData);
    this.input.removeListener("end", this.onEnd);
    this.signalNeedsServer();
    if (this.attached) this.onclose?.();
  }
}
