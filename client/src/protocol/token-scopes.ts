// What a token may do, as exchanges' API keys say it: each scope is one bit
// of a mask, so that a check asks "has it all these?" with one AND.

/** Every scope a token can hold, in the order lists show them. */
export const TOKEN_SCOPES = ["read", "trade", "transfer", "withdraw"] as const;

export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** A token made without `scopes`, and every token made before scopes existed: what a trading bot needs. */
export const DEFAULT_TOKEN_SCOPES: readonly TokenScope[] = ["read", "trade"];

/** The scope whose token must be bound to an allow-list (as Binance requires for withdrawals). */
export const ALLOW_LIST_SCOPE: TokenScope = "withdraw";

/** True for the name of a scope. */
export function isTokenScope(name: string): name is TokenScope {
  return (TOKEN_SCOPES as readonly string[]).includes(name);
}

/** The mask of `scopes`, one bit per scope (`TOKEN_SCOPES`' order); names that are no scope add nothing. */
export function scopeMask(scopes: Iterable<string>): number {
  let mask = 0;
  for (const name of scopes) {
    const bit = (TOKEN_SCOPES as readonly string[]).indexOf(name);
    if (bit >= 0) {
      mask |= 1 << bit;
    }
  }
  return mask;
}

/** The scopes of a mask, in `TOKEN_SCOPES`' order. */
export function scopesOfMask(mask: number): TokenScope[] {
  return TOKEN_SCOPES.filter((_, bit) => (mask & (1 << bit)) !== 0);
}

/** The mask of `DEFAULT_TOKEN_SCOPES`. */
export const DEFAULT_SCOPE_MASK = scopeMask(DEFAULT_TOKEN_SCOPES);
