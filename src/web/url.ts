import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { InputError } from "../core/errors.js";

/** Where a WebFetch URL is really fetched from: the checks and rewrites made before any request. */

/** The address a URL's host names literally (`127.0.0.1`, `[::1]`), or undefined for a name. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** True for `localhost`, `*.localhost` and loopback literals: the one place plain http is kept. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const literal = literalAddress(host);
  if (literal === undefined) return false;
  // ipaddr.process reads IPv4-mapped IPv6 (`::ffff:7f00:1`, as the URL parser writes ::ffff:127.0.0.1) as IPv4.
  return ipaddr.isValid(literal) && ipaddr.process(literal).range() === "loopback";
}

/** Whether two host names name the same host (case and a trailing dot aside). */
export function sameHostName(a: string, b: string): boolean {
  return a.toLowerCase().replace(/\.$/, "") === b.toLowerCase().replace(/\.$/, "");
}

/** http becomes https, except for loopback hosts (a local dev server rarely speaks TLS). */
export function upgradeToHttps(url: URL): URL {
  if (url.protocol !== "http:" || isLoopbackHost(url.hostname)) return url;
  const upgraded = new URL(url);
  upgraded.protocol = "https:";
  if (upgraded.port === "80") upgraded.port = "";
  return upgraded;
}

/**
 * A GitHub file page (`github.com/o/r/blob/ref/path`) as its raw text
 * (`raw.githubusercontent.com/o/r/ref/path`): the page around the file is mostly navigation.
 */
export function githubRawUrl(url: URL): URL | undefined {
  if (url.hostname !== "github.com" && url.hostname !== "www.github.com") return undefined;
  const match = /^\/([^/]+)\/([^/]+)\/blob\/(.+)$/.exec(url.pathname);
  if (!match) return undefined;
  const [, owner, repo, rest] = match;
  return new URL(`https://raw.githubusercontent.com/${owner}/${repo}/${rest}`);
}

/**
 * The URL WebFetch requests for what the caller wrote: parsed, http(s) only, no credentials, upgraded
 * to https and GitHub blobs made raw. Permission rules judge this URL, since it is the one fetched.
 */
export function fetchTarget(input: string): URL {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new InputError(`"${input}" is not a URL; write a full address such as https://example.com/page.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InputError(
      `WebFetch fetches http and https URLs; "${url.protocol}" is not one of them. Read local files with Read.`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new InputError(
      "WebFetch does not send credentials in URLs; remove the user:password@ part (pages that need a login cannot be fetched).",
    );
  }
  url.hash = "";
  return githubRawUrl(url) ?? upgradeToHttps(url);
}
