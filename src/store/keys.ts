// Redis key names: the only place that spells them. Keys are short on
// purpose: there is one key per token, and jemalloc rounds allocations up to
// size classes (…, 32, 48, 64, …), so a token key of at most 44 bytes (with
// its 3-byte sds header and NUL, 48) costs 16 bytes less than one of 45–60.

import { uuidBytes } from "../protocol/uuid-bytes.js";

/**
 * The hash tag content of a user's keys: the 16 bytes of the user's UUID,
 * base64url without padding (22 characters). Derived from the hex digits, so
 * `0B3C…` and `0b3c…` are one user; base64url has no `{` or `}`, and distinct
 * users never share a tag. Throws for anything but UUID text, since silently
 * truncated hex would make users collide.
 */
export function userTag(userKey: string): string {
  return uuidBytes(userKey).toString("base64url");
}

/**
 * The Redis keys of one user: `{<tag>}` (see {@link userTag}) and one letter
 * saying what the key holds. Every key starts with the same hash tag, so all
 * keys an operation touches live in one cluster slot (no CROSSSLOT) and each
 * operation can be one atomic script.
 */
export interface UserRedisKeys {
  /** `{tag}k`: SET of the user's registered public **k**eys (64 lowercase hex each). */
  readonly userKeys: string;
  /**
   * `{tag}t<tokenId>`: STRING of one **t**oken, 41 bytes with a 16-character
   * id (`tokenIdOf()` the create's message digest, so a replay of that create
   * finds it). The value is the token's digest (`tokenDigest()`, 28 raw
   * bytes), followed directly by the UTF-8 name for a named token. Expires
   * with the token.
   */
  token(tokenId: string): string;
  /**
   * `{tag}n`: ZSET of the **n**ames of the user's live named tokens, scored
   * by expiry (ms); makes names unique.
   */
  readonly names: string;
  /**
   * `{tag}i`: HASH from the name of each of the user's named tokens to its
   * **i**d, kept with {@link names} by the same scripts (same fields, pruned
   * together), so that a user's named tokens can be listed without scanning;
   * session tokens never appear in it.
   */
  readonly nameIds: string;
  /**
   * `{tag}l`: ZSET counting the user's **l**ive tokens (session ones
   * included), scored by expiry. Members are the first {@link LIVE_MEMBER_BYTES}
   * bytes of the token's digest, not its id, so it counts tokens without
   * enumerating them.
   */
  readonly live: string;
  /**
   * `{tag}p`: ZSET of the raw SHA-256 of signed messages already **p**layed
   * recently (every one whose signature verified, whatever the answer),
   * scored by when they may be forgotten; refuses replays.
   */
  readonly replay: string;
  /**
   * `{tag}r`: HASH token bucket limiting the **r**ate of create/delete calls:
   * `t` tokens left, `ts` last refill (ms).
   */
  readonly rate: string;
}

/**
 * The keys of the user `userKey` (UUID text, `userKeyOf`). The tag is worked
 * out once per call, since a create names six keys.
 */
export function redisKeysOf(userKey: string): UserRedisKeys {
  const tag = `{${userTag(userKey)}}`;
  return {
    userKeys: `${tag}k`,
    token: (tokenId) => `${tag}t${tokenId}`,
    names: `${tag}n`,
    nameIds: `${tag}i`,
    live: `${tag}l`,
    replay: `${tag}p`,
    rate: `${tag}r`,
  };
}

/**
 * How much of a token's digest names it in the `live` set: 8 bytes. The set
 * only counts a user's tokens (at most `maxActivePerUser`), so 64 bits make a
 * collision, which would merely undercount by one, practically impossible
 * (about 1000² / 2⁶⁵ for a full set), and save 4 bytes per token.
 */
export const LIVE_MEMBER_BYTES = 8;
