import { readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { log } from "../core/log.js";
import { toolUnavailable } from "../process/shells.js";
import { envelopeError, isValidId } from "./jsonrpc.js";

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

export type JsonRpcId = string | number;
export type Message = {
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
  /** Every built-in tool as tools/list shows it; the connection leaves out those this server cannot serve. */
  tools: unknown[];
  /** What tools need of their host (HostCapability values), by tool name; tools that need nothing are absent. */
  requires?: Record<string, string[]>;
  /**
   * For clients on the 2026-07-28 revision (no initialize; each request carries its `_meta` envelope): the
   * SDK server's own answer to `server/discover`, and what it adds to a tools/list result (`resultType`,
   * `_meta` with the server's identity...), as the build recorded them.
   */
  modern?: {
    discover: { supportedVersions: string[] } & Record<string, unknown>;
    listStamp: Record<string, unknown>;
  };
}

/** The envelope keys a 2026-07-28 request carries in `params._meta`. */
const ENVELOPE = {
  version: "io.modelcontextprotocol/protocolVersion",
  client: "io.modelcontextprotocol/clientInfo",
  capabilities: "io.modelcontextprotocol/clientCapabilities",
} as const;
const ENVELOPE_PREFIX = "io.modelcontextprotocol/";

export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Whether a request's `_meta` carries any 2026-07-28 envelope key (an initialize then is not a 2025 one). */
function claimsEnvelope(message: Message): boolean {
  const meta = message.params?._meta;
  return isObject(meta) && Object.keys(meta).some((key) => key.startsWith(ENVELOPE_PREFIX));
}

/**
 * True for a 2026-07-28 request the opening may answer as the SDK would: params holding only `_meta`, whose
 * envelope names a revision this server serves, the client (name and version) and its capabilities, and no
 * other reserved key. Anything else (another key, a malformed envelope) is left to the SDK to answer.
 */
function plainModernRequest(message: Message, versions: readonly string[]): boolean {
  const params = message.params ?? {};
  const meta = params._meta;
  if (!isObject(meta) || Object.keys(params).some((key) => key !== "_meta")) return false;
  const reserved = Object.keys(meta).filter((key) => key.startsWith(ENVELOPE_PREFIX));
  const client = meta[ENVELOPE.client];
  return (
    reserved.length === 3 &&
    versions.includes(meta[ENVELOPE.version] as string) &&
    isObject(client) &&
    typeof client.name === "string" &&
    typeof client.version === "string" &&
    isObject(meta[ENVELOPE.capabilities])
  );
}

/** What a stdio server can do for tools, known before it loads: who its client is, whether a model is set. */
function stdioSupports(capability: string, clientElicits: boolean, modelConfigured: boolean): boolean {
  // Questions and plan approval go to the client's user through elicitation; a model serves Task and
  // WebFetch's prompt; one stdio connection has no other conversation to message and runs no prompts.
  if (capability === "questions" || capability === "planApproval") return clientElicits;
  if (capability === "model") return modelConfigured;
  return false;
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

/** How many characters at each end of an oversized line are searched for the request's id. */
const FRAME_ID_SCAN_CHARS = 4096;

/** The id `text` (JSON) holds, if it is one MCP allows. */
function asId(text: string): JsonRpcId | undefined {
  const value: unknown = JSON.parse(text);
  return isValidId(value) ? value : undefined;
}

const ID_VALUE = String.raw`("(?:[^"\\]|\\.)*"|-?\d+)`;
/** `"id": value` as the last member of the top-level object: the line ends right after it. */
const TRAILING_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
const ID_AFTER_KEY = new RegExp(String.raw`^\s*:\s*${ID_VALUE}\s*[,}]`);

/**
 * The top-level `id` of a JSON object too large to parse, from its first characters (`head`, scanned
 * with strings and nesting followed, so an `"id"` inside `params` is not taken) or, failing that, its last
 * (`tail`); null when neither holds it, as JSON-RPC answers a request whose id cannot be read.
 */
export function oversizedFrameId(head: string, tail: string): JsonRpcId | null {
  let depth = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') {
      let end = i + 1;
      while (end < head.length && head[end] !== '"') end += head[end] === "\\" ? 2 : 1;
      if (end >= head.length) break;
      if (depth === 1 && head.slice(i, end + 1) === '"id"') {
        const value = ID_AFTER_KEY.exec(head.slice(end + 1));
        if (value) return asId(value[1]!) ?? null;
      }
      i = end;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  const trailing = TRAILING_ID.exec(tail);
  return trailing ? (asId(trailing[1]!) ?? null) : null;
}

/**
 * When the client closes stdin, how long requests it already sent may take to be answered before the
 * connection closes anyway (ending the session and killing its processes). Lets `printf ... | cc-tools mcp`
 * get its answers, while a client that died mid-call leaves nothing running for long.
 */
export const INPUT_END_DRAIN_MS = 3_000;

/**
 * Requests that stay open for as long as the client wants them (2026-07-28's `subscriptions/listen`, which
 * carries list-changed notifications): a client that ended its input has ended them, so the connection does
 * not wait for their answers before it closes.
 */
const OPEN_ENDED_METHODS = new Set(["subscriptions/listen"]);

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

/**
 * What may serve messages before the SDK sees them (the session's direct tools/call,
 * src/mcp/direct-calls.ts): `take` returns true for a message it serves itself, false to pass it on to the
 * SDK; `answered` hears of every answer the connection writes.
 */
export interface MessageRouter {
  take(message: Message): boolean;
  answered(id: JsonRpcId): void;
}

export class StdioConnection implements MessageTransport {
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Consulted for every message once the server attached, before the SDK; none by default. */
  router?: MessageRouter;

  /**
   * Resolves true when the server should be loaded (the opening is answered, or a message needs the server),
   * false when the client went away with nothing left to answer, so the server need not load at all.
   */
  readonly needsServer: Promise<boolean>;
  /** Resolves when the connection has closed: the client ended its input and every answer was written. */
  readonly whenClosed: Promise<void>;
  private signalNeedsServer!: (needed: boolean) => void;
  private signalClosed!: () => void;
  private readonly decoder = new StringDecoder("utf8");
  /** The current line so far, in pieces: joined once when its newline arrives (no quadratic re-scan). */
  private partial: string[] = [];
  private partialBytes = 0;
  /**
   * Skipping the rest of an oversized line until its newline; its first and last characters are kept, to
   * answer the request with its own id.
   */
  private discarding: { head: string; tail: string } | undefined;
  private attached = false;
  private inputEnded = false;
  private closed = false;
  /** Requests received and not yet answered: the connection stays open for them after the input ends. */
  private readonly unanswered = new Set<JsonRpcId>();
  private drainTimer: NodeJS.Timeout | undefined;
  /** Messages read before the server attached, replayed to it in order. */
  private readonly backlog: Message[] = [];
  /**
   * Requests the opening answered that the server answers again once it attaches, with the result sent: the
   * server's answers are compared with it and dropped.
   */
  private readonly answered = new Map<JsonRpcId, { method: string; result: string }>();
  private initializeAnswered = false;
  /**
   * Whether the client sent a request of the 2026-07-28 revision: an initialize after one is the SDK's to
   * answer (it refuses one on a connection of that revision).
   */
  private modernSeen = false;
  /** Whether the client said it supports elicitation (tools that ask the user are listed only then). */
  private clientElicits = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Resolves when the output, full, has drained; undefined while it takes writes. */
  private drained: Promise<void> | undefined;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly opening: OpeningData | undefined,
    /** Whether the server will have a model (Task is listed then); the same test `cc-tools mcp` makes. */
    private readonly modelConfigured = false,
  ) {
    this.needsServer = new Promise((resolve) => {
      this.signalNeedsServer = resolve;
    });
    this.whenClosed = new Promise((resolve) => {
      this.signalClosed = resolve;
    });
    if (!opening) this.signalNeedsServer(true);
    input.on("data", this.onData);
    input.on("end", this.onEnd);
    input.on("close", this.onEnd);
    input.on("error", (error: Error) => this.onerror?.(error));
    output.on("error", (error: Error) => this.onerror?.(error));
  }

  private readonly onData = (chunk: Buffer | string) => {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      this.addToLine(text.slice(start, newline));
      if (this.discarding) this.refuseOversized(this.discarding);
      else {
        const line = this.partial.join("").replace(/\r$/, "");
        if (line.trim() !== "") this.receive(line);
      }
      this.partial = [];
      this.partialBytes = 0;
      this.discarding = undefined;
      start = newline + 1;
    }
    this.addToLine(text.slice(start));
  };

  /** Keeps a piece of the current line, or drops the line once it outgrows MAX_FRAME_BYTES. */
  private addToLine(piece: string): void {
    if (piece === "") return;
    if (this.discarding) {
      this.discarding.tail = (this.discarding.tail + piece).slice(-FRAME_ID_SCAN_CHARS);
      return;
    }
    this.partialBytes += Buffer.byteLength(piece);
    if (this.partialBytes <= MAX_FRAME_BYTES) {
      this.partial.push(piece);
      return;
    }
    this.partial.push(piece);
    const line = this.partial;
    let head = "";
    for (let i = 0; i < line.length && head.length < FRAME_ID_SCAN_CHARS; i++) head += line[i];
    this.discarding = { head: head.slice(0, FRAME_ID_SCAN_CHARS), tail: piece.slice(-FRAME_ID_SCAN_CHARS) };
    this.partial = [];
  }

  /**
   * Answers a dropped oversized line. A request gets its answer under its own id (read from the line's first
   * or last characters, where clients put it), so its caller learns at once instead of waiting for a time-out.
   */
  private refuseOversized({ head, tail }: { head: string; tail: string }): void {
    const id = oversizedFrameId(head, tail);
    const message = `A message was larger than ${MAX_FRAME_BYTES} bytes (${MAX_FRAME_BYTES / 1024 / 1024} MiB) and was dropped. Pass large content as a file path instead.`;
    log.warn(`MCP: ${message}`);
    this.write({ jsonrpc: "2.0", id, error: { code: -32600, message } });
  }

  /** The client closed its input: answer what it already asked (for a while), then close. */
  private readonly onEnd = () => {
    if (this.inputEnded || this.closed) return;
    // A last line without its newline still counts: `echo -n '{...}' | cc-tools mcp` is answered.
    this.onData(`${this.decoder.end()}\n`);
    this.inputEnded = true;
    this.input.removeListener("data", this.onData);
    if (this.unanswered.size === 0) {
      void this.close();
      return;
    }
    this.signalNeedsServer(true);
    this.drainTimer = setTimeout(() => void this.close(), INPUT_END_DRAIN_MS);
  };

  /** Tracks requests until answered; notifications/cancelled settles one without an answer. */
  private track(message: Message): void {
    if (typeof message.method !== "string") return;
    if (OPEN_ENDED_METHODS.has(message.method)) return;
    if (message.id !== undefined && message.id !== null) this.unanswered.add(message.id);
    else if (message.method === "notifications/cancelled") {
      this.settle(message.params?.requestId as JsonRpcId);
    }
  }

  private settle(id: JsonRpcId): void {
    this.unanswered.delete(id);
    if (this.inputEnded && this.unanswered.size === 0) void this.close();
  }

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
    const invalid = envelopeError(message);
    if (invalid) {
      const { answer, ...reply } = invalid;
      log.warn(`MCP: refused a malformed message: ${reply.error.message}`);
      if (answer) this.write(reply);
      return;
    }
    this.track(message);
    if (this.attached) {
      this.deliver(message);
      return;
    }
    this.backlog.push(message);
    this.answerOpening(message);
  }

  /**
   * Answers initialize and the first tools/list from the opening data, or for a 2026-07-28 client
   * server/discover and tools/list; anything else needs the server.
   */
  private answerOpening(message: Message): void {
    const { opening } = this;
    const id = message.id;
    if (!opening || id === undefined || id === null) {
      if (message.method !== "notifications/initialized") this.signalNeedsServer(true);
      return;
    }
    if (claimsEnvelope(message)) this.modernSeen = true;
    const modern = opening.modern;
    if (modern && plainModernRequest(message, modern.discover.supportedVersions)) {
      if (message.method === "server/discover") {
        // Left in the backlog: the server answers it too once it attaches, and that answer is compared.
        this.expectFromServer(id, "server/discover", modern.discover);
        this.answerFromOpening(id, modern.discover, true);
        return;
      }
      if (message.method === "tools/list") {
        // Tools that ask the user are offered when this request's client says it elicits.
        const meta = message.params?._meta as Record<string, { elicitation?: unknown }>;
        const capabilities = meta[ENVELOPE.capabilities]!;
        this.backlog.pop();
        this.answerFromOpening(
          id,
          { tools: this.servedTools(Boolean(capabilities.elicitation)), ...modern.listStamp },
          false,
        );
        return;
      }
    }
    const version = message.params?.protocolVersion;
    if (
      message.method === "initialize" &&
      !this.initializeAnswered &&
      !this.modernSeen &&
      opening.protocolVersions.includes(version as string)
    ) {
      this.initializeAnswered = true;
      const client = (message.params?.capabilities ?? {}) as { elicitation?: unknown };
      this.clientElicits = Boolean(client.elicitation);
      const { capabilities, serverInfo, instructions } = opening;
      const result = { protocolVersion: version, capabilities, serverInfo, instructions };
      this.expectFromServer(id, "initialize", result);
      this.answerFromOpening(id, result, true);
      return;
    }
    if (message.method === "tools/list" && this.initializeAnswered && message.params?.cursor === undefined) {
      this.backlog.pop(); // answered for good; the server need not see it
      this.answerFromOpening(id, { tools: this.servedTools(this.clientElicits) }, false);
      return;
    }
    clearTimeout(this.idleTimer);
    this.signalNeedsServer(true);
  }

  /** Notes an answer the server will give again once it attaches (the request stays in the backlog). */
  private expectFromServer(id: JsonRpcId, method: string, result: unknown): void {
    this.answered.set(id, { method, result: JSON.stringify(result) });
  }

  /**
   * Writes an answer of the opening. After the first (`more`: initialize, server/discover) the client's
   * tools/list is waited for a while before the server loads anyway; after the tool list it loads at once.
   */
  private answerFromOpening(id: JsonRpcId, result: unknown, more: boolean): void {
    this.write({ jsonrpc: "2.0", id, result });
    this.settle(id);
    clearTimeout(this.idleTimer);
    if (more) this.idleTimer = setTimeout(() => this.signalNeedsServer(true), OPENING_IDLE_MS);
    else this.signalNeedsServer(true);
  }

  /**
   * The built-in tools as the server's own tools/list shows them: what the host serves (AskUserQuestion only
   * for a client that elicits), and this machine's shells, not the build machine's.
   */
  private servedTools(clientElicits: boolean): unknown[] {
    const opening = this.opening!;
    return opening.tools.filter((tool) => {
      const name = (tool as { name: string }).name;
      const needs = opening.requires?.[name] ?? [];
      return (
        needs.every((c) => stdioSupports(c, clientElicits, this.modelConfigured)) && !toolUnavailable(name)
      );
    });
  }

  /** Called by the SDK when the server attaches: the backlog is replayed, then messages flow through. */
  async start(): Promise<void> {
    if (this.attached) return;
    this.attached = true;
    clearTimeout(this.idleTimer);
    for (const message of this.backlog.splice(0)) this.deliver(message);
    if (this.closed) this.onclose?.();
  }

  /** Hands a message to the router, or to the SDK when the router does not serve it. */
  private deliver(message: Message): void {
    if (!this.router?.take(message)) this.onmessage?.(message);
  }

  async send(message: Message): Promise<void> {
    const id = message.id;
    const isResponse = id !== undefined && id !== null && message.method === undefined;
    const early = isResponse ? this.answered.get(id) : undefined;
    if (isResponse && early) {
      // The build-time answer must be what the server itself says; a difference means a stale build.
      if (JSON.stringify(message.result) !== early.result) {
        log.warn(
          `the MCP opening answered ${early.method} differently from the server; rebuild with npm run build`,
        );
      }
      this.answered.delete(id);
      return;
    }
    await this.write(message);
    if (isResponse) {
      this.settle(id);
      this.router?.answered(id);
    }
  }

  private write(message: Message): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.output.write(`${JSON.stringify(message)}\n`)) return this.drained ?? Promise.resolve();
    // One wait for the output to drain, shared by every answer written meanwhile (a listener each would
    // pile up on a client that reads slowly).
    this.drained ??= new Promise<void>((resolve) =>
      this.output.once("drain", () => {
        this.drained = undefined;
        resolve();
      }),
    );
    return this.drained;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.drainTimer);
    this.input.removeListener("data", this.onData);
    this.input.removeListener("end", this.onEnd);
    this.input.removeListener("close", this.onEnd);
    this.signalNeedsServer(false);
    if (this.attached) this.onclose?.();
    this.signalClosed();
  }
}
