/**
 * Redis key names. Every key of one user carries the hash tag `{u:<userKey>}`,
 * so all keys an operation touches live in one cluster slot (no CROSSSLOT) and
 * each operation can be one atomic script. `userKey` is the lowercase user id.
 */
export const redisKeys = {
  /** SET of the user's registered public keys (64 lowercase hex each). */
  userKeys: (userKey: string) => `{u:${userKey}}:keys`,
  /** HASH of one token: `h` SHA-256 of the token, `n` name ("" for a session token). Expires with the token. */
  token: (userKey: string, tokenId: string) => `{u:${userKey}}:t:${tokenId}`,
  /** ZSET of the names of the user's live named tokens, scored by expiry (ms); makes names unique. */
  names: (userKey: string) => `{u:${userKey}}:names`,
} as const;
