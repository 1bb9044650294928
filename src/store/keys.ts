// Redis key names: the only place that spells them. Keys are short on
// purpose: there is one key per token, and jemalloc rounds allocations up to
// size classes (…, 32, 48, 64, …), so a token key of at most 44 bytes (with
// its 3-byte sds header and NUL, 48) costs 16 bytes less than one of 45–60.

import { uuidBytes } from "@perps/token-client/protocol";

/**
 * The hash tag content of a user's keys: the 16 bytes of the user's UUID,
 * base64url without padding (22 characters). Derived from the hex digits, so
 * `0B3C…` and `0b3c…` are one user; base64url has no `{` or `}`, and distinct
 * users never share a tag. Throws for anything but UUID text, since silently
 * truncated hex would make users collide.
 */
export function userTag(userId: string): string {
  return uuidBytes(userId).toString("base64url");
}

/**
 * The Redis keys of one user: `{<tag>}` (see {@link userTag}) and one letter
 * saying what the key holds. Every key starts with the same hash tag, so all
 * keys an operation touches live in one cluster slot (no CROSSSLOT) and each
 * operation can be one atomic script.
 */
export interface UserRedisKeys {
  /** `{tag}k`: SET of the user's registered public **k**eys (64 lowercase hex each). */
  readonly publicKeys: string;
  /**
   * `{tag}a`: HASH from each registered public key to when it was **a**dded
   * (Unix ms, Redis' clock); a key registered before dates were kept has no
   * entry.
   */
  readonly publicKeysAdded: string;
  /** `{tag}t`: what every token key of the user starts with, for scripts that find tokens by id. */
  readonly tokenPrefix: string;
  /**
   * `{tag}t<tokenId>`: STRING of one **t**oken, a 41-byte key with a
   * 16-character id (`tokenIdOf()` the create's message digest, so a replay
   * of that create finds it). The value is the token's record, declared in
   * src/store/token-record.ts: its digest, its expiry and its name. Expires
   * with the token.
   */
  token(tokenId: string): string;
  /**
   * `{tag}u<tokenId>`: STRING, when the token was last **u**sed (Unix ms, to
   * the minute), written off the check's path (last-use-recorder.ts); expires
   * with the token.
   */
  lastUse(tokenId: string): string;
  /** `{tag}u`: what every last-use key of the user starts with, for the listing's script. */
  readonly lastUsePrefix: string;
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
   * `{tag}l`: ZSET of the user's **l**ive tokens (session ones included),
   * scored by expiry: counts them for the per-user cap, and finds them all
   * for a revocation. Members are the raw {@link LIVE_MEMBER_BYTES} bytes of
   * the token's id, so the token's key is known from its member.
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
  /** `{tag}q`: HASH token bucket, as {@link rate}, limiting the rate of list **q**ueries. */
  readonly listRate: string;
}

/**
 * The Redis keys of the user `userId` (lowercase UUID text, `canonicalUserId`).
 * The tag is worked out once per call, since a create names six keys.
 */
export function redisKeysOf(userId: string): UserRedisKeys {
  const tag = `{${userTag(userId)}}`;
  return {
    publicKeys: `${tag}k`,
    publicKeysAdded: `${tag}a`,
    tokenPrefix: `${tag}t`,
    token: (tokenId) => `${tag}t${tokenId}`,
    lastUse: (tokenId) => `${tag}u${tokenId}`,
    lastUsePrefix: `${tag}u`,
    names: `${tag}n`,
    nameIds: `${tag}i`,
    live: `${tag}l`,
    replay: `${tag}p`,
    rate: `${tag}r`,
    listRate: `${tag}q`,
  };
}

/**
 * A member of the `live` set: the token id's raw bytes (12; its 16 base64url
 * characters are what the token key holds). 4 bytes more per token than the
 * 8-byte digest prefix it replaced, and a zset member of 12 bytes still fits
 * the 16-byte allocation class when the set outgrows its listpack; in
 * exchange a revocation finds every token, session ones included.
 */
export const LIVE_MEMBER_BYTES = 12;

/**
 * What a `live` member was before it held the token id: the token digest's
 * first 8 bytes. A delete still removes such a member, so a token created
 * before the change counts no longer than it lives.
 */
export const LEGACY_LIVE_MEMBER_BYTES = 8;

/** The last-use key of the token whose key this is (`{tag}t<id>` → `{tag}u<id>`). */
export function lastUseKeyOf(tokenKey: string): string {
  const at = tokenKey.indexOf("}") + 1;
  return `${tokenKey.slice(0, at)}u${tokenKey.slice(at + 1)}`;
}

/** The `live` member of the token `tokenId`: its id's raw bytes. */
export function liveMemberOf(tokenId: string): Buffer {
  return Buffer.from(tokenId, "base64url");
}
