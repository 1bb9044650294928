// What a live token may do, and from where: its scopes and its IP
// allow-list, as its record stores them (token_record.proto), read once when
// the record is read and kept beside it in the cache, so that every check
// asks them from memory. Nearly every token has the default grants, which
// are one shared object.

import {
  allowListContains,
  DEFAULT_SCOPE_MASK,
  type IpPrefix,
  parseIpPrefix,
  scopeMask,
  scopesOfMask,
  type TokenScope,
} from "@perps/token-client/protocol";

export interface TokenGrants {
  /** One bit per scope (`scopeMask`). */
  readonly scopeMask: number;
  /** The scopes, in TOKEN_SCOPES' order. */
  readonly scopes: readonly TokenScope[];
  /** Undefined: from anywhere. Otherwise the bearer's address must be inside one. */
  readonly allowList: readonly IpPrefix[] | undefined;
}

/** A token made without scopes or an allow-list, and every token made before they existed. */
export const DEFAULT_GRANTS: TokenGrants = Object.freeze({
  scopeMask: DEFAULT_SCOPE_MASK,
  scopes: Object.freeze(scopesOfMask(DEFAULT_SCOPE_MASK)),
  allowList: undefined,
});

/**
 * The grants of stored lists: no scopes stored means the default ones. An
 * entry that does not parse (none should: create checks them) matches no
 * address, so a damaged list fails closed.
 */
export function tokenGrants(scopes: readonly string[], allowedIps: readonly string[]): TokenGrants {
  const mask = scopes.length === 0 ? DEFAULT_SCOPE_MASK : scopeMask(scopes);
  if (mask === DEFAULT_SCOPE_MASK && allowedIps.length === 0) {
    return DEFAULT_GRANTS;
  }
  return {
    scopeMask: mask,
    scopes: scopesOfMask(mask),
    allowList:
      allowedIps.length === 0
        ? undefined
        : allowedIps.map((text) => parseIpPrefix(text) ?? { bytes: new Uint8Array(0), bits: 1 }),
  };
}

/** Why a live token was refused for its grants: a metric's label and `/auth`'s reason. */
export type GrantRefusal = "insufficient_scope" | "ip_not_allowed";

/**
 * True when a bearer at `clientIp` may use the token: always without an
 * allow-list; with one, only from an address inside it, and never when the
 * address is not known (fail closed).
 */
export function allowedFrom(grants: TokenGrants, clientIp: string | undefined): boolean {
  // Text that is no address (none, "") is inside no list.
  return grants.allowList === undefined || allowListContains(grants.allowList, clientIp ?? "");
}
