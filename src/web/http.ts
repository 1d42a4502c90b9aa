import { STATUS_CODES } from "node:http";
import { Agent, type Dispatcher, fetch, ProxyAgent, type Response } from "undici";
import { ToolError } from "../core/errors.js";
import { packageVersion } from "../core/version.js";
import { type AddressPolicy, checkAddresses, guardedLookup } from "./address.js";
import { FETCH_TIMEOUT_MS, MAX_BODY_BYTES, MAX_REDIRECTS } from "./limits.js";
import { displayProxy, type ProxyConfig, proxyFor, proxyFromEnv, proxyProblem } from "./proxy.js";
import { literalAddress, sameHostName, upgradeToHttps } from "./url.js";

/**
 * One HTTP GET as the web tools need it: connections only to addresses the policy accepts, redirects
 * followed within one host, an overall time-out, the body read with a cap, and every failure turned
 * into a ToolError that says what happened and what to do.
 */

export interface FetchOptions {
  policy: AddressPolicy;
  /** The caller's cancellation. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** The outbound proxy; by default the environment's (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), `null` for none. */
  proxy?: ProxyConfig | null;
}

export interface FetchedResponse {
  kind: "response";
  /** The URL that answered, after redirects within the host. */
  url: string;
  status: number;
  statusText: string;
  headers: Headers;
  body: Buffer;
}

/** A redirect to another host: not followed, so the caller (and its permission rules) decide. */
export interface CrossHostRedirect {
  kind: "crossHostRedirect";
  from: string;
  to: string;
  status: number;
}

/** Why a fetch failed, for hosts and tests (the message is for the model). */
export type FetchFailure =
  | "dns"
  | "refused"
  | "unreachable"
  | "reset"
  | "tls"
  | "timeout"
  | "cancelled"
  | "blocked-address"
  | "too-many-redirects"
  | "too-large"
  | "proxy"
  | "other";

export function fetchError(reason: FetchFailure, message: string): ToolError {
  return new ToolError(message, { metadata: { reason } });
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The reason phrase a server sent, or the standard one when it sent none (HTTP/2 has none). */
export function reasonPhrase(status: number, sent: string | undefined): string {
  // undici leaves statusText unset on a response that came through a forwarding proxy.
  return sent?.trim() || STATUS_CODES[status] || "Unknown Status";
}

function sameHost(a: URL, b: URL): boolean {
  return sameHostName(a.hostname, b.hostname);
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

/** Reads a body to its end, stopping with an error once it passes `maxBytes`. */
async function readCapped(response: Response, url: URL, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    fetchError(
      "too-large",
      `${url.href} is larger than ${megabytes(maxBytes)}, the most WebFetch reads. Fetch a smaller page (a section, an API with paging), or download it with Bash (curl -o file) and Read it in parts.`,
    );
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes && !response.headers.get("content-encoding")) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        await response.body.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(Buffer.from(chunk));
    }
  }
  return Buffer.concat(chunks, size);
}

interface ErrorWithCause {
  code?: string;
  message?: string;
  cause?: ErrorWithCause;
}

/** The innermost coded cause of a fetch failure (undici wraps the socket's error in a TypeError). */
function rootCause(error: unknown): ErrorWithCause {
  const chain: ErrorWithCause[] = [];
  for (let c = error as ErrorWithCause | undefined; c && chain.length < 6; c = c.cause) chain.push(c);
  return [...chain].reverse().find((e) => e.code !== undefined) ?? chain.at(-1) ?? {};
}

/** Through a proxy, these codes are about reaching the proxy: the target's name is resolved by the proxy. */
const PROXY_UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO)/;

/** Turns whatever a fetch threw into an error that names the failure and what to do. */
export function describeFetchError(
  error: unknown,
  url: URL,
  state: { timedOut: boolean; cancelled: boolean; timeoutMs: number; proxy?: string },
): ToolError {
  if (error instanceof ToolError) return error;
  const host = url.host;
  const tunnel = /^Proxy response \((\d+)\)/.exec(rootCause(error).message ?? "");
  if (state.proxy && tunnel) {
    const status = Number(tunnel[1]);
    const why =
      status === 407
        ? "it wants credentials: put them in the proxy URL (http://user:password@host:port)"
        : `${reasonPhrase(status, "")}: it does not let this host through`;
    return fetchError(
      "proxy",
      `The proxy ${displayProxy(state.proxy)} (from HTTPS_PROXY/HTTP_PROXY) refused to connect to ${host} with HTTP ${status}, ${why}. Add the host to NO_PROXY if it should be reached directly.`,
    );
  }
  if (state.cancelled) return fetchError("cancelled", `Fetching ${url.href} was cancelled.`);
  if (state.timedOut) {
    return fetchError(
      "timeout",
      `Fetching ${url.href} timed out after ${state.timeoutMs / 1000} s without a complete answer. The server is slow or unreachable; try again later or fetch another URL.`,
    );
  }
  const cause = rootCause(error);
  const code = cause.code ?? "";
  const detail = cause.message ?? String(error);
  if (cause instanceof Error && cause.name === "BlockedAddressError")
    return fetchError("blocked-address", cause.message);
  if (state.proxy && PROXY_UNREACHABLE.has(code))
    return fetchError(
      "proxy",
      `Cannot reach the proxy ${displayProxy(state.proxy)} (from HTTPS_PROXY/HTTP_PROXY): ${code}. Check the proxy setting, or unset it to connect directly.`,
    );
  if (code === "ENOTFOUND" || code === "ENODATA")
    return fetchError(
      "dns",
      `DNS lookup failed: the host ${url.hostname} was not found. Check the spelling of the address.`,
    );
  if (code === "EAI_AGAIN")
    return fetchError(
      "dns",
      `DNS lookup of ${url.hostname} failed for now (EAI_AGAIN): the resolver did not answer. Check the network and try again.`,
    );
  if (code === "ECONNREFUSED")
    return fetchError(
      "refused",
      `Connection refused by ${host}: nothing accepts connections there. Check the address and port, or whether the server is running.`,
    );
  if (["EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"].includes(code))
    return fetchError(
      "unreachable",
      `Cannot connect to ${host} (${code}): the host is unreachable from here. Check the address, or try again later.`,
    );
  if (TLS_CODE.test(code))
    return fetchError(
      "tls",
      `The TLS (https) connection to ${host} failed: ${detail} (${code}). The site's certificate is not valid for this host or not trusted; WebFetch does not skip certificate checks.`,
    );
  if (["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"].includes(code))
    return fetchError(
      "reset",
      `The connection to ${host} was closed before the response was complete (${code || detail}). Try again; if it keeps happening the server is refusing the request.`,
    );
  if (detail === "bad port")
    return fetchError(
      "other",
      `Port ${url.port} is one the Fetch standard blocks (it belongs to another protocol), so WebFetch does not connect to it. Serve the page on another port.`,
    );
  return fetchError("other", `Fetching ${url.href} failed: ${detail}${code ? ` (${code})` : ""}.`);
}

/**
 * GETs `start`, following at most `maxRedirects` redirects that stay on the same host (each hop's
 * target is upgraded to https like the first URL). Returns the final response with its body, whatever
 * its status, or the first redirect that leaves the host.
 */
export async function fetchUrl(
  start: URL,
  options: FetchOptions,
): Promise<FetchedResponse | CrossHostRedirect> {
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const proxies = options.proxy === undefined ? proxyFromEnv(process.env) : (options.proxy ?? undefined);
  const dispatchers = new Map<string, Dispatcher>();
  /** The direct agent (its lookup judges every address), or one through the proxy. */
  const dispatcher = (proxy: string | undefined): Dispatcher => {
    const key = proxy ?? "";
    let found = dispatchers.get(key);
    if (!found) {
      // http targets go to the proxy as absolute-form requests (many proxies tunnel only to port 443).
      found = proxy
        ? new ProxyAgent({ uri: proxy, proxyTunnel: false })
        : new Agent({ connect: { lookup: guardedLookup(options.policy) } });
      dispatchers.set(key, found);
    }
    return found;
  };
  let url = start;
  let proxy: string | undefined;
  try {
    for (let redirects = 0; ; redirects++) {
      proxy = proxyFor(url, proxies);
      const problem = proxy && proxyProblem(proxy);
      if (problem) {
        throw fetchError(
          "proxy",
          `The proxy setting HTTPS_PROXY/HTTP_PROXY (${displayProxy(proxy!)}) cannot be used: ${problem}. Set it to http://host:port (credentials as http://user:password@host:port), or unset it to connect directly.`,
        );
      }
      // Literal addresses never reach the lookup, so they are judged here.
      const literal = literalAddress(url.hostname);
      if (literal !== undefined) checkAddresses(url.hostname, [literal], options.policy);
      else if (proxy) await judgeProxiedHost(url.hostname, options.policy);
      const response = await fetch(url, {
        dispatcher: dispatcher(proxy),
        redirect: "manual",
        signal,
        headers: {
          "user-agent": `cc-tools/${packageVersion()} (WebFetch)`,
          accept: "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, */*;q=0.8",
          "accept-encoding": "gzip, br, deflate",
          ...options.headers,
        },
      });
      const location = response.headers.get("location");
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => {});
        let next: URL;
        try {
          next = upgradeToHttps(new URL(location, url));
        } catch {
          throw fetchError("other", `${url.href} redirects to "${location}", which is not a valid URL.`);
        }
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          throw fetchError(
            "other",
            `${url.href} redirects to ${next.href}, which is not an http or https URL.`,
          );
        }
        next.username = "";
        next.password = "";
        if (!sameHost(url, next))
          return { kind: "crossHostRedirect", from: url.href, to: next.href, status: response.status };
        if (redirects >= maxRedirects) {
          throw fetchError(
            "too-many-redirects",
            `${start.href} redirected more than ${maxRedirects} times (last to ${next.href}); the site is probably in a redirect loop.`,
          );
        }
        url = next;
        continue;
      }
      const body = await readCapped(response, url, maxBytes);
      return {
        kind: "response",
        url: url.href,
        status: response.status,
        statusText: reasonPhrase(response.status, response.statusText),
        headers: response.headers as unknown as Headers,
        body,
      };
    }
  } catch (error) {
    throw describeFetchError(error, url, {
      timedOut: timeout.aborted,
      cancelled: options.signal?.aborted ?? false,
      timeoutMs,
      proxy,
    });
  } finally {
    for (const d of dispatchers.values()) d.destroy().catch(() => {});
  }
}

/**
 * Through a proxy, the proxy resolves the host and connects, so the address check happens here first: a
 * name this machine resolves to a private address is refused as on a direct connection. A name it
 * cannot resolve at all (a network where only the proxy has DNS) goes to the proxy, whose own policy then
 * decides what it reaches.
 */
async function judgeProxiedHost(hostname: string, policy: AddressPolicy): Promise<void> {
  if (policy.allowsPrivate(hostname)) return;
  let addresses: string[];
  try {
    addresses = (await policy.resolve(hostname)).map((a) => a.address);
  } catch {
    return;
  }
  checkAddresses(hostname, addresses, policy);
}
