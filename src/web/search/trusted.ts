import { type AddressPolicy, systemResolver } from "../address.js";
import type { FetchOptions } from "../http.js";

/**
 * A search provider's endpoint is configuration the user chose (a default, settings, the environment),
 * not a URL a model wrote, so any address it resolves to is accepted.
 */
const trustedPolicy: AddressPolicy = {
  resolve: systemResolver,
  isPublic: () => true,
  allowsPrivate: () => true,
};

export function trustedEndpoint(signal: AbortSignal): Pick<FetchOptions, "policy" | "signal"> {
  return { policy: trustedPolicy, signal };
}
