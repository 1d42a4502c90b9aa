import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/core/errors.js";
import { type AddressPolicy, isPublicAddress } from "../../src/web/address.js";
import { type FetchOptions, fetchUrl } from "../../src/web/http.js";
import { proxyFor, proxyFromEnv } from "../../src/web/proxy.js";
import { serve } from "./servers.js";

const page = (body: string) => (_req: unknown, res: import("node:http").ServerResponse) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(body);
};

/**
 * A forwarding proxy on loopback, as a corporate one behaves: absolute-form GETs are forwarded (every host
 * name goes to `upstream`), CONNECT is tunnelled to `upstream` or refused with `refuseConnect`.
 */
async function proxyServer(upstreamPort: number, refuseConnect?: number) {
  const seen: string[] = [];
  const proxy = await serve((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? "/");
    const forward = httpRequest(
      { host: "127.0.0.1", port: upstreamPort, path: target.pathname, headers: req.headers },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    forward.end();
  });
  const sockets: Socket[] = [];
  proxy.server.on("connect", (req, client: Socket) => {
    seen.push(`CONNECT ${req.url}`);
    sockets.push(client);
    if (refuseConnect) {
      client.end(`HTTP/1.1 ${refuseConnect} No\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const upstream = connect(upstreamPort, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.push(upstream);
  });
  proxy.server.on("close", () => {
    for (const s of sockets) s.destroy();
  });
  return { url: `http://user:secret@127.0.0.1:${proxy.port}`, seen };
}

function policy(resolve: AddressPolicy["resolve"], allowsPrivate = false): AddressPolicy {
  return { resolve, isPublic: isPublicAddress, allowsPrivate: () => allowsPrivate };
}

const unresolvable: AddressPolicy["resolve"] = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

async function fetchText(url: string, options: FetchOptions): Promise<string> {
  try {
    const response = await fetchUrl(new URL(url), options);
    return response.kind === "response" ? response.body.toString("utf8") : `redirect to ${response.to}`;
  } catch (error) {
    if (error instanceof ToolError) return `error: ${error.message}`;
    throw error;
  }
}

describe("web proxy settings", () => {
  it("come from HTTPS_PROXY / HTTP_PROXY / NO_PROXY in either case, and loopback is always direct", () => {
    expect(proxyFromEnv({})).toBeUndefined();
    const config = proxyFromEnv({
      https_proxy: "http://proxy.corp:3128",
      HTTP_PROXY: "http://plain.corp:8080",
      NO_PROXY: "internal.corp, .svc,10.0.0.7,api.example.com:8443",
    });
    const via = (url: string) => proxyFor(new URL(url), config);
    expect(via("https://docs.example.com/x")).toBe("http://proxy.corp:3128");
    expect(via("http://docs.example.com/x")).toBe("http://plain.corp:8080");
    expect(via("https://internal.corp/")).toBeUndefined();
    expect(via("https://wiki.internal.corp/")).toBeUndefined();
    expect(via("https://a.svc/")).toBeUndefined();
    expect(via("https://10.0.0.7/")).toBeUndefined();
    expect(via("https://api.example.com:8443/")).toBeUndefined();
    expect(via("https://api.example.com/")).toBe("http://proxy.corp:3128");
    expect(via("http://localhost:3000/")).toBeUndefined();
    expect(via("http://127.0.0.1:3000/")).toBeUndefined();
    expect(via("http://[::ffff:127.0.0.1]:3000/")).toBeUndefined();
    expect(via("http://[::1]:3000/")).toBeUndefined();
    expect(
      proxyFor(new URL("https://x.org/"), proxyFromEnv({ HTTPS_PROXY: "http://p:1", NO_PROXY: "*" })),
    ).toBeUndefined();
    // Addresses and ranges, IPv6 bare or bracketed; `.name` and `*.name` cover only subdomains; a trailing dot.
    const more = proxyFromEnv({
      HTTPS_PROXY: "proxy.corp:3128",
      NO_PROXY: "2001:db8::5,[fd00::1],10.0.0.0/8,fd12::/16,*.sub.example,.dot.example,trailing.example.",
    });
    const through = (url: string) => proxyFor(new URL(url), more);
    expect(through("https://[2001:db8::5]/")).toBeUndefined();
    expect(through("https://[fd00::1]:8443/")).toBeUndefined();
    expect(through("https://10.20.30.40/")).toBeUndefined();
    expect(through("https://[fd12:3::1]/")).toBeUndefined();
    expect(through("https://11.0.0.1/")).toBe("http://proxy.corp:3128");
    expect(through("https://a.sub.example/")).toBeUndefined();
    expect(through("https://sub.example/")).toBe("http://proxy.corp:3128");
    expect(through("https://dot.example/")).toBe("http://proxy.corp:3128");
    expect(through("https://trailing.example/")).toBeUndefined();
  });
});

describe("fetching through a proxy", () => {
  it("goes through the proxy for a host only the proxy can resolve, and gets the page", async () => {
    const site = await serve(page("through the proxy"));
    const proxy = await proxyServer(site.port);
    const text = await fetchText(`http://docs.example.test:${site.port}/page`, {
      policy: policy(unresolvable),
      proxy: proxyFromEnv({ HTTP_PROXY: proxy.url }),
    });
    expect(text).toBe("through the proxy");
    expect(proxy.seen).toEqual([`GET http://docs.example.test:${site.port}/page`]);
  });

  it("still refuses a host this machine resolves to a private address, before asking the proxy", async () => {
    const site = await serve(page("secret"));
    const proxy = await proxyServer(site.port);
    const text = await fetchText(`http://metadata.example.test:${site.port}/`, {
      policy: policy(async () => [{ address: "169.254.169.254", family: 4 }]),
      proxy: proxyFromEnv({ HTTP_PROXY: proxy.url }),
    });
    expect(text).toMatch(
      /^error: metadata\.example\.test resolves to 169\.254\.169\.254, a link-local address/,
    );
    expect(proxy.seen).toEqual([]);
  });

  it("connects directly to a NO_PROXY host", async () => {
    const site = await serve(page("direct"));
    const proxy = await proxyServer(site.port);
    const text = await fetchText(`http://intranet.test:${site.port}/`, {
      policy: policy(async () => [{ address: "127.0.0.1", family: 4 }], true),
      proxy: proxyFromEnv({ HTTP_PROXY: proxy.url, NO_PROXY: "intranet.test" }),
    });
    expect(text).toBe("direct");
    expect(proxy.seen).toEqual([]);
  });

  it("tunnels https with CONNECT, and says so when the proxy refuses, without showing its password", async () => {
    const site = await serve(page("unused"));
    const proxy = await proxyServer(site.port, 407);
    const text = await fetchText("https://docs.example.test/", {
      policy: policy(unresolvable),
      proxy: proxyFromEnv({ HTTPS_PROXY: proxy.url }),
    });
    expect(proxy.seen).toEqual(["CONNECT docs.example.test:443"]);
    expect(text).toMatch(
      /^error: The proxy http:\/\/127\.0\.0\.1:\d+ \(from HTTPS_PROXY\/HTTP_PROXY\) refused to connect to docs\.example\.test with HTTP 407, it wants credentials/,
    );
    expect(text).not.toContain("secret");
  });

  it("names a proxy whose name does not resolve, and a proxy setting that is no URL", async () => {
    const dns = await fetchText("https://docs.example.test/", {
      policy: policy(unresolvable),
      proxy: proxyFromEnv({ HTTPS_PROXY: "http://user:pw@no-such-proxy.invalid:3128" }),
    });
    expect(dns).toMatch(
      /^error: Cannot reach the proxy http:\/\/no-such-proxy\.invalid:3128 \(from HTTPS_PROXY\/HTTP_PROXY\): (ENOTFOUND|EAI_AGAIN)/,
    );
    expect(dns).not.toContain("pw");
    const bad = await fetchText("https://docs.example.test/", {
      policy: policy(unresolvable),
      proxy: proxyFromEnv({ HTTPS_PROXY: "ftp://proxy.corp:21" }),
    });
    expect(bad).toMatch(
      /^error: The proxy setting HTTPS_PROXY\/HTTP_PROXY \(ftp:\/\/proxy\.corp\) cannot be used: its scheme ftp: is not http, https or socks5/,
    );
  });

  it("names a proxy that cannot be reached", async () => {
    const gone = await serve(() => {});
    const port = gone.port;
    await new Promise<void>((resolve) => gone.server.close(() => resolve()));
    const text = await fetchText("https://docs.example.test/", {
      policy: policy(unresolvable),
      proxy: proxyFromEnv({ HTTPS_PROXY: `http://127.0.0.1:${port}` }),
    });
    expect(text).toMatch(
      /^error: Cannot reach the proxy http:\/\/127\.0\.0\.1:\d+ \(from HTTPS_PROXY\/HTTP_PROXY\): ECONNREFUSED/,
    );
  });
});
