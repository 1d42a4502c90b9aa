import { isLoopbackHost, literalAddress } from "./url.js";

/**
 * The outbound proxy the web tools use, as curl and most tools read it from the environment:
 * HTTPS_PROXY for https URLs, HTTP_PROXY for http ones (either spelling case), and NO_PROXY for the hosts
 * reached directly. Loopback hosts are always reached directly: a proxy cannot reach this machine's
 * local servers for us.
 */
export interface ProxyConfig {
  https?: string;
  http?: string;
  /** NO_PROXY's entries: `*`, host names (each also covering its subdomains), `.domain`, IP literals, optional `:port`. */
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
export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxyConfig | undefined {
  const https = firstSet(env, "HTTPS_PROXY", "https_proxy");
  const http = firstSet(env, "HTTP_PROXY", "http_proxy");
  if (!https && !http) return undefined;
  const noProxy = (firstSet(env, "NO_PROXY", "no_proxy") ?? "")
    .split(/[,\s]+/)
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  return { https, http, noProxy };
}

function bypasses(url: URL, entries: readonly string[]): boolean {
  const host = url.hostname
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[(.*)\]$/, "$1");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return entries.some((entry) => {
    if (entry === "*") return true;
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[(.*)\](:\d+)?$/, "$1$2"))!;
    const [, name = "", entryPort] = match;
    if (entryPort && entryPort !== port) return false;
    const bare = name.replace(/^\*?\./, "");
    if (literalAddress(bare) !== undefined) return host === bare;
    return host === bare || host.endsWith(`.${bare}`);
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
