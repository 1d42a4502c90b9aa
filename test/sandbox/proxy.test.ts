import { spawnSync } from "node:child_process";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  FilteringProxy,
  judgeHost,
  judgeTunnel,
  parseAuthority,
  tlsServerName,
} from "../../src/sandbox/proxy.js";
import { proxySocketPath } from "../../src/sandbox/proxy-socket.js";

/** A minimal TLS 1.2 ClientHello record carrying `name` in its server_name extension. */
function clientHello(name: string | undefined): Buffer {
  const ext: number[] = [];
  if (name !== undefined) {
    const host = Buffer.from(name, "latin1");
    const list = [0, host.length >> 8, host.length & 255, ...host];
    const sni = [list.length >> 8, list.length & 255, ...list];
    ext.push(0, 0, sni.length >> 8, sni.length & 255, ...sni);
  }
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    0,
    0,
    2,
    0x13,
    0x01,
    1,
    0,
    ext.length >> 8,
    ext.length & 255,
    ...ext,
  ];
  const handshake = [1, 0, body.length >> 8, body.length & 255, ...body];
  return Buffer.from([0x16, 3, 1, handshake.length >> 8, handshake.length & 255, ...handshake]);
}

describe("judging hosts and tunnels", () => {
  const policy = {
    allowedDomains: ["example.com", "*.npmjs.org", "127.0.0.2"],
    deniedDomains: ["bad.npmjs.org"],
  };

  it("allows listed hosts and strict subdomains of wildcards; denied domains win", () => {
    expect(judgeHost("EXAMPLE.com.", policy)).toBeUndefined();
    expect(judgeHost("registry.npmjs.org", policy)).toBeUndefined();
    expect(judgeHost("npmjs.org", policy)).toMatch(/not in sandbox\.network\.allowedDomains/);
    expect(judgeHost("bad.npmjs.org", policy)).toMatch(/deniedDomains/);
    expect(judgeHost("example.com.evil.net", policy)).toBeDefined();
    expect(judgeHost("[::1]", policy)).toBeDefined();
  });

  it("parses CONNECT targets and refuses user@host and garbage", () => {
    expect(parseAuthority("example.com:443", 443)).toEqual({ host: "example.com", port: 443 });
    expect(parseAuthority("[::1]:8080", 443)).toEqual({ host: "::1", port: 8080 });
    expect(parseAuthority("example.com@evil.net:443", 443)).toBeUndefined();
    expect(parseAuthority("evil.net:99999", 443)).toBeUndefined();
    expect(parseAuthority("a b:1", 443)).toBeUndefined();
  });

  it("reads the server name of a TLS ClientHello, and waits for the rest of a split one", () => {
    const hello = clientHello("example.com");
    expect(tlsServerName(hello)).toBe("example.com");
    expect(tlsServerName(clientHello(undefined))).toBeNull();
    expect(tlsServerName(hello.subarray(0, 20))).toBeUndefined();
  });

  it("refuses a tunnel whose TLS names another host, or that relays a CONNECT or a request for another host", () => {
    expect(judgeTunnel(clientHello("example.com"), "example.com")).toEqual({ ok: true });
    expect(judgeTunnel(clientHello("evil.net"), "example.com")).toMatchObject({ ok: false });
    const http = (text: string) => Buffer.from(text, "latin1");
    expect(judgeTunnel(http("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), "example.com")).toEqual({
      ok: true,
    });
    expect(
      judgeTunnel(http("CONNECT evil.net:443 HTTP/1.1\r\nHost: evil.net\r\n\r\n"), "example.com"),
    ).toMatchObject({
      ok: false,
      why: expect.stringMatching(/CONNECT to evil\.net/),
    });
    expect(
      judgeTunnel(http("GET http://evil.net/ HTTP/1.1\r\nHost: example.com\r\n\r\n"), "example.com"),
    ).toMatchObject({ ok: false });
    expect(judgeTunnel(http("GET / HTTP/1.1\r\nHost: evil.net\r\n\r\n"), "example.com")).toMatchObject({
      ok: false,
    });
    expect(judgeTunnel(http("GET / HTTP/1.1\r\n\r\n"), "example.com")).toMatchObject({ ok: false });
    expect(judgeTunnel(http("GET / HTTP/1.1\r\nHost: exa"), "example.com")).toBeUndefined();
    expect(judgeTunnel(http("SSH-2.0-OpenSSH_9.2\r\n"), "example.com")).toMatchObject({ ok: false });
  });
});

describe("the proxy, end to end over its Unix socket", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  /** A TCP server on 127.0.0.2 that records what it receives: an allowed host that would relay anywhere. */
  async function recordingServer() {
    const received: string[] = [];
    const server: Server = createServer((socket) =>
      socket.on("data", (d) => received.push(d.toString("latin1"))),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.2", r));
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    return { port: (server.address() as { port: number }).port, received };
  }

  async function proxyOn() {
    // Where launch.ts puts it: a socket that comes and goes there changes no sandbox's arguments.
    const { path, remove } = proxySocketPath();
    const proxy = new FilteringProxy({ allowedDomains: ["127.0.0.2"], deniedDomains: [] }, { path });
    await proxy.ready;
    cleanups.push(async () => {
      await proxy.close();
      remove();
    });
    return { proxy, path };
  }

  function exchange(path: string, chunks: string[]): Promise<string> {
    return new Promise((resolve) => {
      const socket: Socket = connect(path);
      let got = "";
      socket.on("data", (d) => {
        got += d.toString("latin1");
        if (got.includes("200 Connection Established") && chunks.length > 0) socket.write(chunks.shift()!);
      });
      socket.on("error", () => resolve(got));
      socket.on("close", () => resolve(got));
      socket.write(chunks.shift()!);
      setTimeout(() => socket.destroy(), 1_500);
    });
  }

  it("closes a tunnel to an allowed host that carries a CONNECT onward, before anything reaches the host", async () => {
    const upstream = await recordingServer();
    const { proxy, path } = await proxyOn();
    const reply = await exchange(path, [
      `CONNECT 127.0.0.2:${upstream.port} HTTP/1.1\r\nHost: 127.0.0.2:${upstream.port}\r\n\r\n`,
      "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
    ]);
    expect(reply).toContain("200 Connection Established");
    expect(upstream.received).toEqual([]);
    expect(proxy.blocked).toEqual([
      expect.objectContaining({ host: "127.0.0.2", why: expect.stringMatching(/CONNECT to evil\.example/) }),
    ]);
  });

  it("answers 403 naming the setting for a CONNECT to a host not allowed", async () => {
    const { proxy, path } = await proxyOn();
    const reply = await exchange(path, ["CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n"]);
    expect(reply).toMatch(/^HTTP\/1\.1 403/);
    expect(reply).toContain("sandbox.network.allowedDomains");
    expect(reply).not.toMatch(/dangerouslyDisableSandbox|disable the sandbox/i);
    expect(proxy.blocked).toHaveLength(1);
  });

  it("passes an ordinary request through a tunnel to an allowed host", async () => {
    const upstream = await recordingServer();
    const { proxy, path } = await proxyOn();
    await exchange(path, [
      `CONNECT 127.0.0.2:${upstream.port} HTTP/1.1\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: 127.0.0.2:${upstream.port}\r\n\r\n`,
    ]);
    expect(upstream.received.join("")).toContain("GET / HTTP/1.1");
    expect(proxy.blocked).toEqual([]);
  });
});

describe("the proxies' socket directory", () => {
  it("is this user's own, and sockets a killed process left there are removed by the next one made", () => {
    const first = proxySocketPath();
    const dir = dirname(first.path);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(dir).uid).toBe(process.getuid!());
    // A process killed while its networked command ran: its release never came.
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const left = join(dir, `${gone}-left.sock`);
    const live = join(dir, `${process.pid}-live.sock`);
    writeFileSync(left, "");
    writeFileSync(live, "");
    const second = proxySocketPath();
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
    rmSync(live);
    first.remove();
    second.remove();
  });
});
