/**
 * Redis key names. Every key of one user carries the hash tag `{u:<userKey>}`,
 * so all keys an operation touches live in one cluster slot (no CROSSSLOT) and
 * each operation can be one atomic script. `userKey` is the lowercase user id.
 */
export const redisKeys = {
  /** SET of the user's registered public keys (64 lowercase hex each). */
  userKeys: (userKey: string) => `{u:${userKey}}:keys`,
  /**
   * STRING of one token: the SHA-256 of the token (base64url, 43 characters),
   * then `:` and the name for a named token. Expires with the token. A string
   * of at most 44 bytes is Redis' most compact value (embstr).
   */
  token: (userKey: string, tokenId: string) => `{u:${userKey}}:t:${tokenId}`,
  /** ZSET of the names of the user's live named tokens, scored by expiry (ms); makes names unique. */
  names: (userKey: string) => `{u:${userKey}}:names`,
  /**
   * ZSET counting the user's live tokens (session ones included), scored by
   * expiry: members are a prefix of the token's hash, so it counts tokens
   * without enumerating their ids.
   */
  live: (userKey: string) => `{u:${userKey}}:live`,
  /** ZSET of the SHA-256 of signed messages accepted recently, scored by when they may be forgotten. */
  replay: (userKey: string) => `{u:${userKey}}:replay`,
  /** HASH token bucket of create/delete calls: `t` tokens left, `ts` last refill (ms). */
  rate: (userKey: string) => `{u:${userKey}}:rate`,
} as const;

/** How much of a token's SHA-256 (base64url) names it in the `live` set: 96 bits. */
export const LIVE_MEMBER_LENGTH = 16;
