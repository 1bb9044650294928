import assert from "node:assert/strict";
import type { Created } from "./forward-auth-calls.js";
import { samples } from "./prometheus-samples.js";
import { restJson } from "./rest-json.js";
import { signedCreate, signedDelete, type TestUser } from "./signing.js";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * The token cache's promise (docs/security.md, issue 35): a delete made
 * through the service is refused by the process that answered it before that
 * answer, and by every other process within OWN_BOUND_MS of it; a change made
 * to Redis by anyone else within OTHERS_BOUND_MS. Another process's
 * invalidation comes beside the delete's reply, not before it, so "at once"
 * is not promised there (measured: docs/security.md).
 */
export const OWN_BOUND_MS = 5;
export const OTHERS_BOUND_MS = 50;

/** One `/auth` check on a connection of its own (with several workers, any of them may take it). */
export async function authStatus(internalUrl: string, token: string): Promise<number> {
  const res = await fetch(`${internalUrl}/auth`, {
    headers: { authorization: `Bearer ${token}`, connection: "close" },
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The service's token-cache metrics (every worker's, summed). */
export async function cacheMetrics(internalUrl: string) {
  const res = await fetch(`${internalUrl}/metrics`, { headers: { connection: "close" } });
  const all = samples(await res.text());
  const value = (name: string) => all.get(name) ?? 0;
  return {
    hits: value("perps_token_cache_hits_total"),
    misses: value("perps_token_cache_misses_total"),
    invalidations: value("perps_token_cache_invalidations_total"),
    entries: value("perps_token_cache_entries"),
    drops: (reason: string) => value(`perps_token_cache_drops_total{reason="${reason}"}`),
    lagCount: value("perps_token_cache_invalidation_lag_seconds_count"),
  };
}

/**
 * Checks `token` until the service answers it from its cache (hits rise):
 * the tracking connections come up shortly after the service starts, or
 * after a loss. Every answer must be 200.
 */
export async function waitUntilCached(
  internalUrl: string,
  token: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    assert.equal(await authStatus(internalUrl, token), 200);
    const before = (await cacheMetrics(internalUrl)).hits;
    assert.equal(await authStatus(internalUrl, token), 200);
    if ((await cacheMetrics(internalUrl)).hits > before) {
      return;
    }
    await sleep(50);
  }
  assert.fail(`the token was not answered from the cache within ${timeoutMs} ms`);
}

/** Waits until `ms` have passed since `since` (a `performance.now()`). */
export async function untilElapsed(since: number, ms: number): Promise<void> {
  const left = since + ms - performance.now();
  if (left > 0) {
    await sleep(left);
  }
}

let sent = 0;
/** A fresh timestamp for each signed call (unique, so no two calls are one message). */
const timestamp = () => BigInt(Date.now() + (sent++ % 1000));

/** Creates a token over REST (signed now: a suite may start long after it was imported). */
export async function createToken(
  publicUrl: string,
  user: TestUser,
  fields: { name?: string } = {},
): Promise<Created> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: restJson(await signedCreate(user, { ...fields, timestamp: timestamp() })),
  });
  const body = (await res.json()) as Partial<Created>;
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.ok(body.id !== undefined && body.token !== undefined);
  return { id: body.id, token: body.token };
}

/** Deletes a token over REST (signed now). */
export async function deleteToken(publicUrl: string, user: TestUser, tokenId: string) {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "DELETE",
    headers: { "content-type": "application/json" },
    body: restJson(await signedDelete(user, tokenId, { timestamp: timestamp() })),
  });
  assert.equal(res.status, 200, await res.text());
}
