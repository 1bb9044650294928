import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis, type RedisOptions } from "ioredis";
import {
  createTrackedReader,
  type TrackedReader,
  type TrackingLossReason,
} from "../../../src/redis/tracked-reader.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";

/** Waits until `test` holds, polling; fails the test after `ms` (a bound for slow machines, not a speed goal). */
async function until(what: string, test: () => boolean | Promise<boolean>, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) {
      assert.fail(`not ${what} within ${ms} ms`);
    }
    await sleep(20);
  }
}

// A pair over a private redis-server; `redis` is another client, as another instance or an operator.
describe("createTrackedReader", () => {
  const { server, redis } = redisServerSuite();

  /** A pair of a new source client, and what it reported. */
  function pairOf(opts: { heartbeatMs?: number; source?: RedisOptions } = {}) {
    const invalidated: (string[] | null)[] = [];
    const lost: TrackingLossReason[] = [];
    const source = new Redis(server.url, opts.source ?? {});
    const pair = createTrackedReader({
      source,
      events: {
        invalidated: (keys) => invalidated.push(keys === null ? null : keys.map(String)),
        lost: (reason) => lost.push(reason),
      },
      ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
    });
    const close = () => {
      pair.close();
      source.disconnect();
    };
    return { pair, invalidated, lost, close };
  }

  /** The server's id of the pair's connection named `name` ("perps-invalidations" or "perps-tracked-reads"). */
  async function connectionIds(name: string): Promise<string[]> {
    const list = String(await redis.call("CLIENT", "LIST"));
    return list
      .split("\n")
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1] ?? "");
  }

  async function kill(name: string): Promise<void> {
    const [id] = await connectionIds(name);
    assert.ok(id, name);
    await redis.call("CLIENT", "KILL", "ID", id);
  }

  /** Reads `key` through the pair, then has another client change it. */
  async function readThenChange(pair: TrackedReader, key: string) {
    await redis.set(key, "v1");
    assert.equal(String(await pair.read(key)), "v1");
    await redis.set(key, "v2");
  }

  it("comes up with its reader tracked for its subscriber, and reports another client's change of a key it read", async () => {
    const { pair, invalidated, lost, close } = pairOf();
    try {
      await until("up", () => pair.up);
      const [subscriber] = await connectionIds("perps-invalidations");
      const list = String(await redis.call("CLIENT", "LIST"));
      const reader = list.split("\n").find((line) => line.includes(" name=perps-tracked-reads "));
      assert.match(reader ?? "", new RegExp(` redir=${subscriber} `));
      assert.match(
        list.split("\n").find((line) => line.includes(" name=perps-invalidations ")) ?? "",
        / sub=1 /,
      );

      await readThenChange(pair, "k1");
      await until("invalidated", () => invalidated.length > 0);
      assert.deepEqual(invalidated, [["k1"]]);
      // A key it never read is not reported.
      await redis.set("k2", "v");
      await redis.del("k1");
      await sleep(100);
      assert.deepEqual(invalidated, [["k1"]]);
      assert.deepEqual(lost, []);
    } finally {
      close();
    }
  });

  it("reports a flush as every key", async () => {
    const { pair, invalidated, close } = pairOf();
    try {
      await until("up", () => pair.up);
      await redis.set("f1", "v");
      await pair.read("f1");
      await redis.flushall();
      await until("invalidated", () => invalidated.length > 0);
      assert.deepEqual(invalidated, [null]);
    } finally {
      close();
    }
  });

  it("a lost connection: down at once in a new epoch, told once, then up again and tracking", async () => {
    const { pair, invalidated, lost, close } = pairOf();
    try {
      await until("up", () => pair.up);
      const epoch = pair.epoch;
      await kill("perps-invalidations");
      await until("lost", () => lost.length > 0);
      assert.deepEqual(lost, ["connection"]);
      assert.ok(pair.epoch > epoch);
      await until("up again", () => pair.up);
      assert.equal(pair.ended, false);
      await readThenChange(pair, "k3");
      await until("invalidated", () => invalidated.some((keys) => keys?.includes("k3") === true));
    } finally {
      close();
    }
  });

  it("a subscriber that stops answering: lost after three missed heartbeats", async () => {
    const { pair, lost, close } = pairOf({ heartbeatMs: 50 });
    try {
      await until("up", () => pair.up);
      // Every client waits, the pair's subscriber included; the pause ends by itself.
      await redis.call("CLIENT", "PAUSE", "2000", "ALL");
      await until("lost", () => lost.length > 0);
      assert.equal(lost[0], "heartbeat");
      assert.equal(pair.up, false);
      await until("up again", () => pair.up);
    } finally {
      close();
    }
  });

  it("a connection ended for good: lost, ended, never up again", async () => {
    const { pair, lost, close } = pairOf({ source: { retryStrategy: () => null } });
    try {
      await until("up", () => pair.up);
      await kill("perps-tracked-reads");
      await until("ended", () => pair.ended);
      assert.equal(lost[0], "connection");
      assert.equal(pair.up, false);
    } finally {
      close();
    }
  });

  it("close(): lost as closed, down for good, both connections gone", async () => {
    const { pair, lost, close } = pairOf();
    await until("up", () => pair.up);
    close();
    assert.deepEqual(lost, ["closed"]);
    assert.equal(pair.up, false);
    await until("disconnected", async () => {
      const ids = [
        ...(await connectionIds("perps-invalidations")),
        ...(await connectionIds("perps-tracked-reads")),
      ];
      return ids.length === 0;
    });
    pair.close();
    assert.deepEqual(lost, ["closed"]);
  });
});
