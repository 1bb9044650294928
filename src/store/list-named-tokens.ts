/**
 * Where a user's named tokens are listed: one script
 * (lua/list-named-tokens.lua) takes a call from the user's list rate and
 * cuts a page of the name index in Redis.
 *
 * Tested by test/integration/token-store.test.ts, test/integration/token-store-list-pages.test.ts, test/integration/list-tokens.test.ts.
 */

import type { RedisClient } from "../redis/redis-client.js";
import { redisKeysOf } from "./keys.js";
import type { RedisRunner } from "./redis-runner.js";
import { type TokenRecordExtras, tokenRecordExtras } from "./token-record.js";
import { LIST_NAMED_TOKENS, TokenScriptStatus as Status } from "./token-scripts.js";

/** A live named token, as listed: its id, name, expiry, last use and every other stored field. */
export interface NamedTokenSummary extends TokenRecordExtras {
  id: string;
  name: string;
  expiresAtMs: number;
  /** When it was last used (Unix ms, to the minute); undefined before its first use. */
  lastUsedAtMs: number | undefined;
}

/** Each token of the script's reply: name, id, expiry, record, last use (list-named-tokens.lua). */
const ENTRY_FIELDS = 5;

/** A place in the listing's order (expiry, then name in byte order): a page resumes after it. */
export interface ListPosition {
  expiresAtMs: number;
  name: string;
}

/** What a page of the listing asks for. */
export interface ListPageRequest {
  /** Most tokens in the page (at least 1). */
  size: number;
  /** Undefined for the first page. */
  after: ListPosition | undefined;
}

export type ListNamedOutcome =
  | {
      kind: "page";
      tokens: NamedTokenSummary[];
      /** Where the next page resumes; undefined when this page is the last. */
      next: ListPosition | undefined;
    }
  | { kind: "rate-limited"; retryAfterMs: number };

/** A page of the user's live named tokens (TokenStore's `listNamed`). */
export type NamedTokenLister = (userId: string, page: ListPageRequest) => Promise<ListNamedOutcome>;

export interface NamedTokenListerOptions {
  /** The client with the token scripts defined on it (scriptedClient, lua-script.ts). */
  redis: () => RedisClient;
  runRedis: RedisRunner;
  /** List calls per user per rate period (the list bucket's capacity, decimal text). */
  rateCapacity: string;
  /** The rate bucket's period, in ms (decimal text). */
  ratePeriodMs: string;
}

export function createNamedTokenLister(opts: NamedTokenListerOptions): NamedTokenLister {
  const { redis, runRedis, rateCapacity, ratePeriodMs } = opts;
  return async (userId, page) => {
    const redisKeys = redisKeysOf(userId);
    const args = LIST_NAMED_TOKENS.argv(
      { names: redisKeys.names, nameIds: redisKeys.nameIds, listRate: redisKeys.listRate },
      {
        tokenPrefix: redisKeys.tokenPrefix,
        lastUsePrefix: redisKeys.lastUsePrefix,
        rateCapacity,
        ratePeriodMs,
        pageSize: String(page.size),
        afterExpiresAtMs: page.after === undefined ? "" : String(page.after.expiresAtMs),
        afterName: page.after?.name ?? "",
      },
    );
    const [status, retryAfterMs, more, lastExpiresAtMs, lastName, ...flat] = await runRedis(
      "token.list",
      () => redis().perpsListNamedTokensBuffer(...args),
      "read",
    );
    if (status === Status.RATE_LIMITED) {
      return { kind: "rate-limited", retryAfterMs };
    }
    const tokens: NamedTokenSummary[] = [];
    for (let i = 0; i + ENTRY_FIELDS <= flat.length; i += ENTRY_FIELDS) {
      const record = flat[i + 3];
      const lastUse = String(flat[i + 4]);
      tokens.push({
        // The name and expiry the index orders by; the other fields from the record.
        ...(Buffer.isBuffer(record) ? tokenRecordExtras(record) : tokenRecordExtras(Buffer.of())),
        name: String(flat[i]),
        id: String(flat[i + 1]),
        expiresAtMs: Number(String(flat[i + 2])),
        lastUsedAtMs: lastUse === "" ? undefined : Number(lastUse),
      });
    }
    const next =
      more === 1
        ? { expiresAtMs: Number(String(lastExpiresAtMs)), name: String(lastName) }
        : undefined;
    return { kind: "page", tokens, next };
  };
}
