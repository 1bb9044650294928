import { timingSafeEqual } from "node:crypto";
import { parseToken, tokenDigest } from "@perps/token-client/protocol";
import { redisKeysOf } from "../store/keys.js";
import type { LastUseRecorder } from "../store/last-use-recorder.js";
import type { TokenGrants } from "../store/token-grants.js";
import type { TokenStore } from "../store/token-store.js";

/** Who a live bearer token belongs to. */
export interface BearerIdentity {
  /** The user's UUID, lowercase. */
  userId: string;
  tokenId: string;
  /** "" for a session token. */
  name: string;
  /** When the token expires, in Unix ms (as the store keeps it). */
  expiresAtMs: number;
  /** Its scopes and allow-list: the caller checks them against the call. */
  grants: TokenGrants;
}

export interface BearerAuthenticator {
  /**
   * The identity of a live token; undefined for anything else (malformed:
   * no Redis call). Throws the store's StoreError when Redis cannot answer.
   */
  authenticate(token: string): Promise<BearerIdentity | undefined>;
  /** The caller let a live token through (its own checks of scopes and address passed): its last use. */
  used(identity: BearerIdentity): void;
}

export interface BearerAuthenticatorOptions {
  store: TokenStore;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Where uses are recorded (ListTokens' lastUsedAt). Default: nowhere. */
  lastUse?: LastUseRecorder;
}

/**
 * Checks bearer tokens against the store: the token names its user and
 * record (parseToken, offline), one read fetches that record, and the
 * token's digest must equal the stored one, and its expiry be ahead, on
 * every check. The store may answer from its cache (see TokenRecordCache),
 * which Redis' invalidations keep exact.
 */
export function createBearerAuthenticator(opts: BearerAuthenticatorOptions): BearerAuthenticator {
  const { store, lastUse } = opts;
  const now = opts.now ?? Date.now;
  return {
    used(identity) {
      lastUse?.used(redisKeysOf(identity.userId).token(identity.tokenId));
    },
    async authenticate(token) {
      const parsed = parseToken(token);
      if (parsed === undefined) {
        return undefined;
      }
      const stored = await store.lookup(parsed.userId, parsed.tokenId);
      if (stored === undefined) {
        return undefined;
      }
      const digest = tokenDigest(token);
      // Constant time: how much of a guess matches must not show in the answer's timing.
      if (stored.digest.length !== digest.length || !timingSafeEqual(stored.digest, digest)) {
        return undefined;
      }
      // Redis expires the key at that instant; between its clock and ours, the earlier wins.
      if (stored.expiresAtMs <= now()) {
        return undefined;
      }
      // Only records of tokens someone holds are kept: a flood of unknown or
      // wrong tokens grows nothing and pushes no live entry out.
      stored.keep?.();
      return {
        ...parsed,
        name: stored.name,
        expiresAtMs: stored.expiresAtMs,
        grants: stored.grants,
      };
    },
  };
}
