import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/** Real HTTP servers on loopback addresses, closed after each test. */

export interface TestServer {
  /** `http://<host>:<port>`, no trailing slash. */
  origin: string;
  port: number;
  /** Paths requested, in order. */
  hits: string[];
  /** Request bodies, by arrival. */
  bodies: string[];
  server: Server;
}

const open: Server[] = [];

afterEach(async () => {
  while (open.length > 0) {
    const server = open.pop()!;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export async function serve(handler: Handler, host = "127.0.0.1"): Promise<TestServer> {
  const hits: string[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      handler(req, res, body);
    });
  });
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://${host}:${port}`, port, hits, bodies, server };
}

/** A handler serving fixed routes; anything else is a 404. */
export function routes(
  table: Record<string, { status?: number; headers?: Record<string, string>; body: string | Buffer }>,
): Handler {
  return (req, res) => {
    const route = table[new URL(req.url ?? "/", "http://x").pathname];
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here");
      return;
    }
    res.writeHead(route.status ?? 200, route.headers ?? { "content-type": "text/html; charset=utf-8" });
    res.end(route.body);
  };
}
