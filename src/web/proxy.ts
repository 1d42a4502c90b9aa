import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { isLoopbackHost } from "./url.js";

/**
 * The outbound proxy the web tools use, as curl and most tools read it from the environment:
 * HTTPS_PROXY for https URLs, HTTP_PROXY for http ones (either spelling case), and NO_PROXY for the hosts
 * reached directly. Loopback hosts are always reached directly: a proxy cannot reach this machine's
 * local servers for us.
 */
export interface ProxyConfig {
  https?: string;
  http?: string;
  /** NO_PROXY's entries: `*`, host names (each also covering its subdomains), `.domain`, IP addresses and CIDR ranges, optional `:port`. */
  noProxy: string[];
}

function firstSet(env: NodeJS.ProcessEnv, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** The proxy settings in `env`, or undefined when none is set. */
/** A proxy given without a scheme (`proxy.corp:3128`) is an http one, as curl reads it. */
function withScheme(proxy: string | undefined): string | undefined {
  return proxy === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

/** Schemes a proxy URL may have (undici's ProxyAgent: HTTP CONNECT over http or TLS, or SOCKS5). */
const PROXY_SCHEMES = new Set(["http:", "https:", "socks5:", "socks:"]);

/** Why `proxy` cannot be used, or undefined when it can. */
export function proxyProblem(proxy: string): string | undefined {
  let url: URL;
  try {
    url = new URL(proxy);
  } catch {
    return "it is not a URL";
  }
  if (!PROXY_SCHEMES.has(url.protocol)) return `its scheme ${url.protocol} is not http, https or socks5`;
  if (!url.hostname) return "it names no host";
  return undefined;
}

export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxyConfig | undefined {
  const https = withScheme(firstSet(env, "HTTPS_PROXY", "https_proxy"));
  const http = withScheme(firstSet(env, "HTTP_PROXY", "http_proxy"));
  if (!https && !http) return undefined;
  const noProxy = (firstSet(env, "NO_PROXY", "no_proxy") ?? "")
    .split(/[,\s]+/)
    .map((entry) => entry.trim().toLowerCase().replace(/\.$/, ""))
    .filter(Boolean);
  return { https, http, noProxy };
}

/** One NO_PROXY entry, parsed: an address range, or a host name with whether it covers the name itself. */
type Bypass =
  | { kind: "all" }
  | { kind: "range"; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; port?: string }
  | { kind: "name"; name: string; subdomainsOnly: boolean; port?: string };

/**
 * Parses a NO_PROXY entry as curl and Go read them: `*`; an IP address or CIDR range (IPv6 bare or in
 * brackets); a host name, optionally with `:port`. A bare name covers itself and its subdomains; `.name`
 * and `*.name` cover only subdomains. Entries that parse as none of these are ignored.
 */
function parseBypass(entry: string): Bypass | undefined {
  if (entry === "*") return { kind: "all" };
  let host = entry;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) [, host = "", port] = bracketed;
  else if (entry.split(":").length === 2) [host = "", port] = entry.split(":");
  if (port !== undefined && !/^\d+$/.test(port)) return undefined;
  if (host.includes("/")) {
    try {
      return { kind: "range", range: ipaddr.parseCIDR(host), port };
    } catch {
      return undefined;
    }
  }
  if (isIP(host) !== 0) {
    const address = ipaddr.parse(host);
    return { kind: "range", range: [address, address.kind() === "ipv4" ? 32 : 128], port };
  }
  const subdomainsOnly = host.startsWith(".") || host.startsWith("*.");
  const name = host.replace(/^\*?\./, "").replace(/\.$/, "");
  return name === "" ? undefined : { kind: "name", name, subdomainsOnly, port };
}

function bypasses(url: URL, entries: readonly string[]): boolean {
  const host = url.hostname
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[(.*)\]$/, "$1");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const address = isIP(host) !== 0 ? ipaddr.process(host) : undefined;
  return entries.some((entry) => {
    const bypass = parseBypass(entry);
    if (!bypass) return false;
    if (bypass.kind === "all") return true;
    if (bypass.port !== undefined && bypass.port !== port) return false;
    if (bypass.kind === "range") {
      const [base] = bypass.range;
      return address !== undefined && address.kind() === base.kind() && address.match(bypass.range);
    }
    if (address !== undefined) return false;
    return (!bypass.subdomainsOnly && host === bypass.name) || host.endsWith(`.${bypass.name}`);
  });
}

/** The proxy URL to fetch `url` through, or undefined to connect directly. */
export function proxyFor(url: URL, config: ProxyConfig | undefined): string | undefined {
  if (!config || isLoopbackHost(url.hostname) || bypasses(url, config.noProxy)) return undefined;
  return url.protocol === "https:" ? config.https : config.http;
}

/** A proxy URL as it may be shown: without its credentials. */
export function displayProxy(proxy: string): string {
  try {
    const url = new URL(proxy);
    url.username = "";
    url.password = "";
    return url.href.replace(/\/$/, "");
  } catch {
    return "(an invalid proxy URL)";
  }
}
