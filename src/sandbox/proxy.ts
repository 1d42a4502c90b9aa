import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { hostMatches } from "../permissions/rules.js";

/** Most bytes read from a tunnel before its first message (TLS ClientHello, HTTP head) must be complete. */
const TUNNEL_PEEK_LIMIT = 64 * 1024;
/** How long a client gets to send the first bytes through an opened tunnel. */
const TUNNEL_PEEK_TIMEOUT_MS = 10_000;

export interface DomainPolicy {
  allowedDomains: readonly string[];
  deniedDomains: readonly string[];
}

/** One connection the proxy refused, for the command's result. */
export interface ProxyBlock {
  host: string;
  port: number;
  why: string;
}

/** Lower case, no trailing dot, no IPv6 brackets: the form hosts are compared in. */
function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/** Why a host may not be reached, or undefined when an allowed domain covers it and no denied one does. */
export function judgeHost(host: string, policy: DomainPolicy): string | undefined {
  const h = normalHost(host);
  if (policy.deniedDomains.some((d) => hostMatches(d, h))) return `${h} is in sandbox.network.deniedDomains`;
  if (policy.allowedDomains.some((d) => hostMatches(d, h))) return undefined;
  return `${h} is not in sandbox.network.allowedDomains and no WebFetch(domain:${h}) allow rule names it`;
}

/** `host:port` (or `[v6]:port`) of a CONNECT request or Host header; undefined when malformed or carrying `user@`. */
export function parseAuthority(
  text: string,
  defaultPort: number,
): { host: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:@/[\]]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: normalHost(match[1]!), port };
}

/** The server name of a TLS ClientHello; null when it has none; undefined when the bytes are incomplete. */
export function tlsServerName(data: Buffer): string | null | undefined {
  if (data.length < 5) return undefined;
  const recordEnd = 5 + data.readUInt16BE(3);
  if (data.length < recordEnd) return undefined;
  let at = 5;
  if (data[at] !== 0x01) return null; // not a ClientHello
  at += 4 + 2 + 32; // handshake header, client version, random
  at += 1 + (data[at] ?? 0); // session id
  if (at + 2 > recordEnd) return null;
  at += 2 + data.readUInt16BE(at); // cipher suites
  at += 1 + (data[at] ?? 0); // compression methods
  if (at + 2 > recordEnd) return null;
  const extensionsEnd = Math.min(recordEnd, at + 2 + data.readUInt16BE(at));
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = data.readUInt16BE(at);
    const length = data.readUInt16BE(at + 2);
    at += 4;
    if (type === 0 && at + 5 <= extensionsEnd) {
      // server_name_list length, name type (0 = host_name), name length, name
      const nameLength = data.readUInt16BE(at + 3);
      return data.subarray(at + 5, at + 5 + nameLength).toString("latin1");
    }
    at += length;
  }
  return null;
}

/**
 * Judges the first message inside a tunnel to `host`: TLS must name that host (or none), HTTP must be an
 * ordinary request for it, not a request for another host or a CONNECT onward (an allowed host that is
 * itself a proxy would otherwise relay anywhere). Anything else is refused. Undefined: wait for more bytes.
 */
export function judgeTunnel(
  first: Buffer,
  host: string,
): { ok: true } | { ok: false; why: string } | undefined {
  if (first[0] === 0x16) {
    const name = tlsServerName(first);
    if (name === undefined)
      return first.length >= TUNNEL_PEEK_LIMIT ? { ok: false, why: "an oversized TLS hello" } : undefined;
    if (name === null || normalHost(name) === host) return { ok: true };
    return { ok: false, why: `the TLS connection inside the tunnel to ${host} names ${normalHost(name)}` };
  }
  const text = first.toString("latin1");
  if (!/^[A-Z]+ /.test(text)) return { ok: false, why: `the tunnel to ${host} carries neither TLS nor HTTP` };
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0)
    return first.length >= TUNNEL_PEEK_LIMIT ? { ok: false, why: "an oversized HTTP head" } : undefined;
  const [requestLine = "", ...headerLines] = text.slice(0, headEnd).split("\r\n");
  const [method, target = ""] = requestLine.split(" ");
  if (method === "CONNECT") return { ok: false, why: `a CONNECT to ${target} inside the tunnel to ${host}` };
  if (!target.startsWith("/")) {
    let named: string;
    try {
      named = normalHost(new URL(target).hostname);
    } catch {
      return { ok: false, why: `an HTTP request for "${target}" inside the tunnel to ${host}` };
    }
    if (named !== host)
      return { ok: false, why: `an HTTP request for ${named} inside the tunnel to ${host}` };
  }
  const hostHeader = headerLines.find((l) => /^host:/i.test(l))?.slice(5);
  const named = hostHeader === undefined ? undefined : parseAuthority(hostHeader, 80)?.host;
  if (named !== host) {
    return {
      ok: false,
      why: `a Host header naming ${hostHeader?.trim() ?? "nothing"} inside the tunnel to ${host}`,
    };
  }
  return { ok: true };
}

function blockedText(block: ProxyBlock): string {
  return (
    `cc-tools sandbox: the connection to ${block.host}:${block.port} was blocked: ${block.why}. ` +
    "A user can allow a host in sandbox.network.allowedDomains or with a WebFetch(domain:…) allow rule.\n"
  );
}

/**
 * The only way out of the sandbox's network namespace: an HTTP proxy (plain requests and CONNECT) that
 * judges the final destination of every request and tunnel against the domain policy. It runs in the
 * host process, outside the sandbox, and holds in every permission mode.
 */
export class FilteringProxy {
  readonly blocked: ProxyBlock[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  readonly ready: Promise<void>;

  constructor(
    private readonly policy: DomainPolicy,
    listenOn: { path: string } | { port: number; host: string },
  ) {
    // node:http loads with the first proxy, not with the server: on Node 24 it is 2 to 3 MB resident, in
    // a server that may never run a sandboxed command (docs/PERFORMANCE.md, "Idle RSS").
    this.server = process.getBuiltinModule("node:http").createServer((req, res) => this.onRequest(req, res));
    this.server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) =>
      this.onConnect(req, socket, head),
    );
    this.server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    this.ready = new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(listenOn, () => resolve());
    });
  }

  /** The TCP port, when listening on one (macOS); undefined on a Unix socket. */
  get port(): number | undefined {
    const address = this.server.address();
    return typeof address === "object" && address ? address.port : undefined;
  }

  private block(host: string, port: number, why: string): ProxyBlock {
    const block = { host, port, why };
    this.blocked.push(block);
    return block;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const refuse = (block: ProxyBlock) => {
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8", connection: "close" });
      res.end(blockedText(block));
    };
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      refuse(this.block("(none)", 0, `"${req.url}" is not an absolute http:// URL`));
      return;
    }
    const host = normalHost(url.hostname);
    const port = Number(url.port || 80);
    if (url.protocol !== "http:") {
      refuse(this.block(host, port, `${url.protocol} URLs cannot go through a plain request`));
      return;
    }
    const named = req.headers.host;
    const hostHeader = named === undefined ? undefined : parseAuthority(named, 80);
    if (named !== undefined && (hostHeader?.host !== host || hostHeader.port !== port)) {
      refuse(this.block(host, port, `the Host header names ${req.headers.host}, not ${host}`));
      return;
    }
    const why = judgeHost(host, this.policy);
    if (why) {
      refuse(this.block(host, port, why));
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = process
      .getBuiltinModule("node:http")
      .request(
        { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers },
        (response) => {
          res.writeHead(response.statusCode ?? 502, response.rawHeaders);
          response.pipe(res);
        },
      );
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
      res.end(`cc-tools sandbox proxy: ${host}:${port} could not be reached: ${error.message}\n`);
    });
    req.pipe(upstream);
  }

  private onConnect(req: IncomingMessage, client: Socket, head: Buffer): void {
    client.on("error", () => {});
    const refuse = (block: ProxyBlock) => {
      const body = blockedText(block);
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    const target = parseAuthority(req.url ?? "", 443);
    if (!target) {
      refuse(this.block(String(req.url), 0, "the CONNECT target is not host:port"));
      return;
    }
    const { host, port } = target;
    const why = judgeHost(host, this.policy);
    if (why) {
      refuse(this.block(host, port, why));
      return;
    }
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    let first = head;
    const timer = setTimeout(() => client.destroy(), TUNNEL_PEEK_TIMEOUT_MS);
    const inspect = () => {
      const verdict = judgeTunnel(first, host);
      if (verdict === undefined) return;
      client.off("data", onData);
      clearTimeout(timer);
      if (!verdict.ok) {
        this.block(host, port, verdict.why);
        client.destroy();
        return;
      }
      const upstream = connect({ host, port });
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    };
    const onData = (chunk: Buffer) => {
      first = Buffer.concat([first, chunk]);
      inspect();
    };
    client.on("data", onData);
    if (first.length > 0) inspect();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
