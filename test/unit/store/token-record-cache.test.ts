import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextMacrotask } from "node:timers/promises";
import { Redis, ReplyError } from "ioredis";
import type { TrackedReader } from "../../../src/redis/tracked-reader.js";
import type { TrackedReadersEvents } from "../../../src/redis/tracked-readers.js";
import { DEFAULT_GRANTS } from "../../../src/store/token-grants.js";
import {
  type CachedTokenRecord,
  createTokenRecordCache,
  type TokenRecordCache,
} from "../../../src/store/token-record-cache.js";

// The race logic alone, with a pair whose replies and invalidations the test
// orders itself (the integration tests run it over real Redis connections).

interface Reply {
  key: string;
  resolve(value: Buffer | null): void;
  reject(reason: Error): void;
}

function scriptedPair() {
  const replies: Reply[] = [];
  const pair: { up: boolean; epoch: number } & TrackedReader = {
    up: true,
    epoch: 1,
    ended: false,
    read: (key: string) =>
      new Promise<Buffer | null>((resolve, reject) => {
        replies.push({ key, resolve, reject });
      }),
    close() {},
  };
  return { pair, replies };
}

function setUp(maxEntries = 10) {
  const { pair, replies } = scriptedPair();
  let events: TrackedReadersEvents | undefined;
  const seen = { hits: 0, misses: 0, invalidated: 0, drops: [] as string[], entries: 0 };
  const cache = createTokenRecordCache({
    // Never used: reads go to the scripted pair, and there is no probe.
    redis: { client: new Redis({ lazyConnect: true }) },
    maxEntries,
    probeIntervalMs: 0,
    graceMs: 0,
    pairs: (given) => {
      events = given;
      return { pairOf: () => pair, ended: false, close() {} };
    },
    observer: {
      hit: () => seen.hits++,
      miss: () => seen.misses++,
      invalidated: (n) => {
        seen.invalidated += n;
      },
      dropped: (reason, entries) => seen.drops.push(`${reason} ${entries}`),
      entries: (n) => {
        seen.entries = n;
      },
      lag: () => undefined,
    },
  });
  if (events === undefined) {
    throw new Error("the cache did not build its pairs");
  }
  return { cache, pair, replies, events, seen };
}

const record = (name: string): CachedTokenRecord => ({
  digest: Buffer.alloc(28, 7),
  name,
  expiresAtMs: Date.now() + 60_000,
  grants: DEFAULT_GRANTS,
});

const fallback = async () => {
  throw new Error("the tracking pair was up: no fallback read");
};

/** Starts a read and answers it with `value` once `before` ran (the reply's arrival). */
async function readAnswered(
  cache: TokenRecordCache,
  replies: Reply[],
  key: string,
  before: () => void = () => undefined,
) {
  const reading = cache.read(key, fallback);
  const reply = replies.shift();
  assert.equal(reply?.key, key);
  before();
  reply?.resolve(Buffer.from("stored"));
  return reading;
}

describe("createTokenRecordCache", () => {
  it("keeps a copy of the digest that shares no memory with node's Buffer pool", async () => {
    const { cache, replies } = setUp();
    const digest = Buffer.from(Buffer.alloc(28, 9)); // From the pool, as a Redis reply's slice may be.
    (await readAnswered(cache, replies, "k1")).keep({ ...record("a"), digest });
    digest.fill(0);
    const kept = cache.get("k1")?.digest;
    assert.deepEqual(kept, Buffer.alloc(28, 9));
    // Its memory is a slab of digests, not node's pool shared with every small Buffer.
    assert.notEqual(kept?.buffer, digest.buffer);
    assert.notEqual(kept?.buffer, Buffer.from([1]).buffer);
  });

  it("keeps a record read while the pair is up, and answers it from memory", async () => {
    const { cache, replies, seen } = setUp();
    const read = await readAnswered(cache, replies, "k1");
    assert.deepEqual(read.value, Buffer.from("stored"));
    assert.equal(cache.get("k1"), undefined);
    read.keep(record("a"));
    assert.equal(cache.get("k1")?.name, "a");
    assert.deepEqual(seen, { hits: 1, misses: 1, invalidated: 0, drops: [], entries: 1 });
  });

  it("does not keep a read an invalidation of its key overtook (the reply was in flight)", async () => {
    const { cache, replies, events, seen } = setUp();
    const read = await readAnswered(cache, replies, "k1", () =>
      events.invalidated([Buffer.from("k1")]),
    );
    read.keep(record("a"));
    assert.equal(cache.get("k1"), undefined);
    assert.equal(seen.invalidated, 1);
  });

  it("does not keep a read whose key was invalidated in the tick its reply came", async () => {
    const { cache, replies, events } = setUp();
    const reading = cache.read("k1", fallback);
    replies.shift()?.resolve(Buffer.from("stored"));
    // The invalidation is handled before the reader's continuation runs.
    events.invalidated([Buffer.from("k1")]);
    (await reading).keep(record("a"));
    assert.equal(cache.get("k1"), undefined);
  });

  it("an invalidation of another key leaves a read in flight alone", async () => {
    const { cache, replies, events } = setUp();
    const read = await readAnswered(cache, replies, "k1", () =>
      events.invalidated([Buffer.from("k2")]),
    );
    read.keep(record("a"));
    assert.equal(cache.get("k1")?.name, "a");
  });

  it("drops a kept record when Redis invalidates its key", async () => {
    const { cache, replies, events, seen } = setUp();
    (await readAnswered(cache, replies, "k1")).keep(record("a"));
    events.invalidated([Buffer.from("k1")]);
    assert.equal(cache.get("k1"), undefined);
    assert.equal(seen.entries, 0);
  });

  it("a loss drops everything and disowns reads of the older epoch", async () => {
    const { cache, pair, replies, events, seen } = setUp();
    (await readAnswered(cache, replies, "k1")).keep(record("a"));
    const inFlight = readAnswered(cache, replies, "k2", () => {
      pair.up = false;
      pair.epoch = 2;
      events.lost("connection");
    });
    assert.equal(cache.get("k1"), undefined, "dropped at the loss");
    const read = await inFlight;
    // Back up before keep(): the read still belongs to the lost epoch.
    pair.up = true;
    read.keep(record("b"));
    assert.equal(cache.get("k2"), undefined);
    // With how many records it held then: k1's.
    assert.deepEqual(seen.drops, ["connection 1"]);
  });

  it("reads through the fallback, and keeps nothing, while the pair is down", async () => {
    const { cache, pair, replies } = setUp();
    pair.up = false;
    const read = await cache.read("k1", async () => Buffer.from("from the client"));
    assert.deepEqual(read.value, Buffer.from("from the client"));
    assert.equal(replies.length, 0);
    pair.up = true;
    read.keep(record("a"));
    assert.equal(cache.get("k1"), undefined);
  });

  it("a read its node redirects (the slot moved: MOVED, ASK) goes through the fallback, not kept", async () => {
    const { cache, replies } = setUp();
    for (const reply of ["MOVED 3999 127.0.0.1:7002", "ASK 3999 127.0.0.1:7002"]) {
      const reading = cache.read("k1", async () => Buffer.from("from the cluster client"));
      replies.shift()?.reject(new ReplyError(reply));
      const read = await reading;
      assert.deepEqual(read.value, Buffer.from("from the cluster client"), reply);
      read.keep(record("a"));
      assert.equal(cache.get("k1"), undefined, reply);
    }
  });

  it("any other failure of a read fails it: no second read elsewhere", async () => {
    const { cache, replies } = setUp();
    for (const failure of [
      new ReplyError("CLUSTERDOWN The cluster is down"),
      new Error("timeout"),
    ]) {
      const reading = cache.read("k1", fallback);
      replies.shift()?.reject(failure);
      await assert.rejects(reading, failure);
    }
  });

  it("answers no hit while the pair is down, even before the loss is reported", async () => {
    const { cache, pair, replies } = setUp();
    (await readAnswered(cache, replies, "k1")).keep(record("a"));
    pair.up = false;
    assert.equal(cache.get("k1"), undefined);
  });

  it("does not keep a read kept only after its reply's tick passed", async () => {
    const { cache, replies } = setUp();
    const read = await readAnswered(cache, replies, "k1");
    await nextMacrotask();
    read.keep(record("a"));
    assert.equal(cache.get("k1"), undefined);
  });

  it("forget drops a key and poisons its read in flight; forgetPrefix a user's keys", async () => {
    const { cache, replies } = setUp();
    (await readAnswered(cache, replies, "{u1}ta")).keep(record("a"));
    (await readAnswered(cache, replies, "{u1}tb")).keep(record("b"));
    (await readAnswered(cache, replies, "{u2}ta")).keep(record("c"));
    const read = await readAnswered(cache, replies, "{u2}tb", () => cache.forget("{u2}tb"));
    read.keep(record("d"));
    assert.equal(cache.get("{u2}tb"), undefined);
    cache.forgetPrefix("{u1}t");
    assert.equal(cache.get("{u1}ta"), undefined);
    assert.equal(cache.get("{u1}tb"), undefined);
    assert.equal(cache.get("{u2}ta")?.name, "c");
  });

  it("a flush (nil invalidation) drops everything", async () => {
    const { cache, replies, events, seen } = setUp();
    (await readAnswered(cache, replies, "k1")).keep(record("a"));
    events.invalidated(null);
    assert.equal(cache.get("k1"), undefined);
    assert.deepEqual(seen.drops, ["flush 1"]);
  });

  it("closing is no drop to tell of", async () => {
    const { cache, replies, events, seen } = setUp();
    (await readAnswered(cache, replies, "k1")).keep(record("a"));
    cache.close();
    events.lost("closed");
    assert.deepEqual(seen.drops, []);
  });

  it("holds at most maxEntries records, the oldest out first", async () => {
    const { cache, replies, seen } = setUp(2);
    for (const key of ["k1", "k2", "k3"]) {
      (await readAnswered(cache, replies, key)).keep(record(key));
    }
    assert.equal(seen.entries, 2);
    assert.equal(cache.get("k1"), undefined);
    assert.equal(cache.get("k3")?.name, "k3");
  });

  it("keeps a copy of the digest, not a view of the reply's buffer", async () => {
    const { cache, replies } = setUp();
    const reply = Buffer.alloc(64, 1);
    const kept = record("a");
    kept.digest = reply.subarray(0, 28);
    (await readAnswered(cache, replies, "k1")).keep(kept);
    reply.fill(9);
    assert.deepEqual(cache.get("k1")?.digest, Buffer.alloc(28, 1));
  });
});
