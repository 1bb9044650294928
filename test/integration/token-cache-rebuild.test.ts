import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { RedisHolder } from "../../src/redis/redis-holder.js";
import { DEFAULT_GRANTS } from "../../src/store/token-grants.js";
import { createTokenRecordCache } from "../../src/store/token-record-cache.js";
import { startTestRedisServer } from "../support/test-redis.js";

const RECORD = {
  digest: Buffer.alloc(28, 7),
  name: "bot",
  expiresAtMs: Date.now() + 3_600_000,
  grants: DEFAULT_GRANTS,
};

/** The client ids of the cache's tracked-read connections on the server. */
async function trackedReaders(admin: Redis): Promise<string[]> {
  const list = String(await admin.call("CLIENT", "LIST"));
  return list
    .split("\n")
    .filter((line) => line.includes("name=perps-tracked-reads"))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1] ?? "");
}

/** Reads `key` through the cache until the read is kept and the next get hits. */
async function cachedWithin(
  cache: ReturnType<typeof createTokenRecordCache>,
  key: string,
  ms: number,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const read = await cache.read(key, async () => null);
    if (read.value !== null) {
      read.keep(RECORD);
    }
    if (cache.get(key) !== undefined) {
      return true;
    }
    await sleep(50);
  }
  return false;
}

describe("the token cache after its client is replaced", () => {
  it("builds tracking connections of the new client, and answers from memory again", async () => {
    const redis = await startTestRedisServer();
    const admin = new Redis(redis.url);
    const first = new Redis(redis.url);
    const second = new Redis(redis.url);
    const holder: { client: Redis } & RedisHolder = { client: first };
    const cache = createTokenRecordCache({
      redis: holder,
      maxEntries: 10,
      probeIntervalMs: 0,
      graceMs: 0,
    });
    try {
      await admin.set("{u}tk", "record");
      assert.ok(await cachedWithin(cache, "{u}tk", 5000), "cached with the first client");
      const before = await trackedReaders(admin);
      assert.equal(before.length, 1);

      // What the service's holder does when ioredis ends a client for good.
      holder.client = second;
      first.disconnect();
      cache.forget("{u}tk");
      await sleep(1100);
      assert.ok(await cachedWithin(cache, "{u}tk", 5000), "cached again after the swap");
      const after = await trackedReaders(admin);
      assert.equal(after.length, 1, "the old pair is closed");
      assert.notDeepEqual(after, before, "a new pair, made from the new client");

      // And it is kept exact: a change by another client drops the entry.
      await admin.set("{u}tk", "changed");
      const deadline = Date.now() + 1000;
      while (cache.get("{u}tk") !== undefined && Date.now() < deadline) {
        await sleep(10);
      }
      assert.equal(cache.get("{u}tk"), undefined);
    } finally {
      cache.close();
      first.disconnect();
      second.disconnect();
      admin.disconnect();
      await redis.stop();
    }
  });
});
