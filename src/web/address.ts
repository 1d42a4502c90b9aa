import { lookup as dnsLookup } from "node:dns/promises";
import { isIPv6, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which addresses a fetch may connect to. The name is resolved once per connection, every address it
 * resolves to is judged, and the connection goes to exactly those addresses: a DNS answer that changes
 * between the check and the connect (rebinding) cannot slip a private address past the check.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (the system resolver by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface AddressPolicy {
  resolve: Resolver;
  /** Whether an address is on the public internet. */
  isPublic(address: string): boolean;
  /** Whether the user allowed this host even on a private, link-local or loopback address. */
  allowsPrivate(hostname: string): boolean;
}

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

/** The IANA range an address is in (`unicast` is the public internet); IPv4-mapped IPv6 counts as IPv4. */
export function addressRange(address: string): string {
  return ipaddr.process(address).range();
}

export function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && addressRange(address) === "unicast";
}

const RANGE_WORDS: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private-network address",
  uniqueLocal: "a private-network (unique local) address",
  linkLocal: "a link-local address (where cloud metadata services answer)",
  unspecified: "the unspecified address",
  carrierGradeNat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
};

function describeRange(address: string): string {
  if (!ipaddr.isValid(address)) return "not an IP address";
  const range = addressRange(address);
  return RANGE_WORDS[range] ?? `a non-public address (${range})`;
}

/** A connection refused because the host is on a non-public address and no rule names it. */
export class BlockedAddressError extends Error {
  readonly code = "CC_BLOCKED_ADDRESS";
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    const bare = hostname.replace(/^\[(.*)\]$/, "$1");
    const resolved = bare === address ? `${address} is` : `${hostname} resolves to ${address},`;
    // Rules name hosts; an IPv6 literal cannot be written in one, so the way in is a name for it.
    const remedy = isIPv6(bare)
      ? "fetch it through a host name (such as localhost) and add the rule WebFetch(domain:<that name>)"
      : `add the rule WebFetch(domain:${hostname})`;
    super(
      `${resolved} ${describeRange(address)}. WebFetch reaches private, link-local and loopback addresses ` +
        `only for hosts an allow rule names: ${remedy} (settings permissions.allow, or --allow) if this host ` +
        "is meant to be fetched.",
    );
    this.name = "BlockedAddressError";
  }
}

/** Throws BlockedAddressError for the first address that is not public, unless the host is allowed. */
export function checkAddresses(hostname: string, addresses: readonly string[], policy: AddressPolicy): void {
  if (policy.allowsPrivate(hostname)) return;
  const blocked = addresses.find((address) => !policy.isPublic(address));
  if (blocked !== undefined) throw new BlockedAddressError(hostname, blocked);
}

/**
 * A `lookup` for net/tls connect options (and so for an undici Agent): resolves with the policy's
 * resolver, judges every address, and hands exactly those addresses to the socket.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    policy.resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = wanted ? found.filter((a) => a.family === wanted) : found;
        if (addresses.length === 0) {
          const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
            code: "ENOTFOUND",
            hostname,
          });
          callback(error, "", 0);
          return;
        }
        try {
          checkAddresses(
            hostname,
            addresses.map((a) => a.address),
            policy,
          );
        } catch (error) {
          callback(error as NodeJS.ErrnoException, "", 0);
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}
