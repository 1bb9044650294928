import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import type { RedisClient } from "../../../src/redis/redis-client.js";
import { openRedisConnections } from "../../../src/redis/redis-connections.js";
import { redisServerSuite } from "../../support/redis-server-suite.js";

/** The command timeout of a holder's client (a URL topology gives a plain Redis client). */
function commandTimeoutOf(client: RedisClient): number | undefined {
  assert.ok(client instanceof Redis);
  return client.options.commandTimeout;
}

// The connections over a private redis-server.
describe("openRedisConnections", () => {
  const { server } = redisServerSuite();

  it("opens only the main client when writes wait for no replica", async () => {
    const built: RedisClient[] = [];
    const redis = openRedisConnections({
      topology: { kind: "url", url: server.url },
      minReplicasAck: 0,
      waitTimeoutMs: 500,
      onClient: (client) => built.push(client),
    });
    try {
      assert.deepEqual(redis.waitLanes, []);
      assert.deepEqual(built, [redis.main.client]);
      await redis.ready(10_000);
      assert.equal(await redis.main.client.ping(), "PONG");
      assert.equal(commandTimeoutOf(redis.main.client), 1000);
    } finally {
      redis.close();
    }
  });

  it("gives writes that wait for replicas lanes of their own, whose timeout outlasts WAIT's", async () => {
    const built: RedisClient[] = [];
    const redis = openRedisConnections({
      topology: { kind: "url", url: server.url },
      minReplicasAck: 1,
      waitTimeoutMs: 500,
      onClient: (client) => built.push(client),
    });
    try {
      assert.equal(redis.waitLanes.length, 4);
      assert.equal(built.length, 5);
      const clients = new Set([redis.main, ...redis.waitLanes].map((h) => h.client));
      assert.equal(clients.size, 5, "a connection each");
      await redis.ready(10_000);
      for (const lane of redis.waitLanes) {
        assert.equal(lane.client.status, "ready");
        assert.equal(commandTimeoutOf(lane.client), 1500);
      }
      assert.equal(commandTimeoutOf(redis.main.client), 1000);
    } finally {
      redis.close();
    }
    const two = openRedisConnections({
      topology: { kind: "url", url: server.url },
      minReplicasAck: 2,
      waitTimeoutMs: 100,
      waitLanes: 2,
    });
    assert.equal(two.waitLanes.length, 2);
    two.close();
  });

  it("gives lanes to revocations that may wait though other writes do not; onMainClient sees main alone", async () => {
    const mains: RedisClient[] = [];
    const redis = openRedisConnections({
      topology: { kind: "url", url: server.url },
      minReplicasAck: 0,
      revocationsMayWait: true,
      waitTimeoutMs: 500,
      waitLanes: 2,
      onMainClient: (client) => mains.push(client),
    });
    try {
      assert.equal(redis.waitLanes.length, 2);
      assert.deepEqual(mains, [redis.main.client]);
    } finally {
      redis.close();
    }
  });

  it("ready() rejects when a client is not ready in time", async () => {
    const redis = openRedisConnections({
      topology: { kind: "url", url: "redis://127.0.0.1:1" },
      minReplicasAck: 0,
      waitTimeoutMs: 500,
      onClient: (client) => client.on("error", () => undefined),
    });
    try {
      await assert.rejects(redis.ready(200), /Redis was not ready within 200 ms/);
    } finally {
      redis.close();
    }
  });

  it("close() ends every client", async () => {
    const redis = openRedisConnections({
      topology: { kind: "url", url: server.url },
      minReplicasAck: 1,
      waitTimeoutMs: 500,
      waitLanes: 2,
    });
    await redis.ready(10_000);
    const clients = [redis.main, ...redis.waitLanes].map((h) => h.client);
    const ended = clients.map((client) => once(client, "end"));
    redis.close();
    await Promise.all(ended);
    assert.deepEqual(
      clients.map((client) => client.status),
      ["end", "end", "end"],
    );
  });
});
