import {
  ALLOW_LIST_SCOPE,
  DEFAULT_TOKEN_SCOPES,
  isTokenScope,
  MAX_ALLOWED_IPS,
  parseIpPrefix,
  TOKEN_SCOPES,
  type TokenScope,
} from "@perps/token-client";

/** What a create asks for beyond name and lifetime: left out where it is the default. */
export interface CreateGrants {
  scopes?: TokenScope[];
  allowedIps?: string[];
}

/** The entries of Allowed addresses: separated by spaces, commas or both. */
export function addressesOf(text: string): string[] {
  return text.split(/[\s,]+/).filter((entry) => entry !== "");
}

/**
 * The create form's Scopes (the values checked) and Allowed addresses (as
 * typed) as the request's `scopes` and `allowedIps`, checked here with the
 * service's own rules so that a mistake is named in the form's words before
 * anything is signed. A form left as it opens (read and trade, no address)
 * asks for neither: its request, and so its signed message, is the seed's.
 */
export function createGrants(checked: readonly string[], addressesText: string): CreateGrants {
  const scopes = TOKEN_SCOPES.filter((scope) => checked.includes(scope));
  const unknown = checked.find((value) => !isTokenScope(value));
  if (unknown !== undefined) {
    throw new Error(`Scopes: "${unknown}" is not a scope`);
  }
  if (scopes.length === 0) {
    throw new Error("Scopes: choose at least one");
  }
  const allowedIps = addressesOf(addressesText);
  if (allowedIps.length > MAX_ALLOWED_IPS) {
    throw new Error(
      `Allowed addresses: at most ${MAX_ALLOWED_IPS}, there are ${allowedIps.length}`,
    );
  }
  for (const [i, entry] of allowedIps.entries()) {
    if (parseIpPrefix(entry) === undefined) {
      throw new Error(
        `Allowed addresses: "${entry}" is not an IPv4 or IPv6 address or a CIDR prefix with its host bits zero (203.0.113.7, 2001:db8::/32)`,
      );
    }
    if (allowedIps.indexOf(entry) !== i) {
      throw new Error(`Allowed addresses: "${entry}" is there twice`);
    }
  }
  if (scopes.includes(ALLOW_LIST_SCOPE) && allowedIps.length === 0) {
    throw new Error(`Scopes: ${ALLOW_LIST_SCOPE} needs allowed addresses`);
  }
  const isDefault =
    scopes.length === DEFAULT_TOKEN_SCOPES.length &&
    DEFAULT_TOKEN_SCOPES.every((scope) => scopes.includes(scope));
  return {
    ...(isDefault ? {} : { scopes }),
    ...(allowedIps.length === 0 ? {} : { allowedIps }),
  };
}
