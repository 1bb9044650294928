import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Cluster, Redis } from "ioredis";
import { freePort } from "../../../src/process/ports.js";
import { createRedisClient, waitForRedisReady } from "../../../src/redis/redis-client.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../../src/redis/redis-server-process.js";
import { lateValue } from "../../support/late-value.js";
import { tempDirs } from "../../support/temp-dirs.js";

const dirs = tempDirs("redis-client-");
after(() => dirs.removeAll());

/** A client of a port where nothing listens, its errors (it keeps reconnecting) swallowed. */
async function clientOfNothing(
  opts: { commandTimeoutMs?: number; maxReconnectDelayMs?: number } = {},
) {
  const client = createRedisClient({
    topology: { kind: "url", url: `redis://127.0.0.1:${await freePort()}` },
    ...opts,
  });
  client.on("error", () => undefined);
  return client;
}

describe("createRedisClient", () => {
  const [tcp, setTcp] = lateValue<RedisServerProcess>("tcp");
  const [unix, setUnix] = lateValue<RedisServerProcess>("unix");
  before(async () => {
    setTcp(await startRedisServerProcess({ dir: dirs.make(), port: await freePort() }));
    setUnix(await startRedisServerProcess({ dir: dirs.make(), port: "unix" }));
  });
  after(async () => {
    await Promise.all([tcp.stop(), unix.stop()]);
  });

  it("connects to a server by URL, failing fast by default: 1 s timeouts, no offline queue, no retries", async () => {
    assert.ok("url" in tcp.location);
    const client = createRedisClient({ topology: { kind: "url", url: tcp.location.url } });
    try {
      assert.ok(client instanceof Redis);
      await waitForRedisReady(client, 10_000);
      assert.equal(await client.ping(), "PONG");
      const o = client.options;
      assert.deepEqual(
        [
          o.commandTimeout,
          o.connectTimeout,
          o.maxRetriesPerRequest,
          o.enableOfflineQueue,
          o.enableAutoPipelining,
        ],
        [1000, 1000, 0, false, true],
      );
    } finally {
      client.disconnect();
    }
  });

  it("connects to a server by socket", async () => {
    assert.ok("path" in unix.location);
    const client = createRedisClient({ topology: { kind: "socket", path: unix.location.path } });
    try {
      await waitForRedisReady(client, 10_000);
      assert.equal(await client.ping(), "PONG");
    } finally {
      client.disconnect();
    }
  });

  it("fails a command not answered within commandTimeoutMs", async () => {
    assert.ok("url" in tcp.location);
    const client = createRedisClient({
      topology: { kind: "url", url: tcp.location.url },
      commandTimeoutMs: 100,
    });
    try {
      await waitForRedisReady(client, 10_000);
      // BLPOP on an empty list answers after its own 2 s timeout: far later than 100 ms.
      await assert.rejects(client.blpop("empty-list", 2), /Command timed out/);
    } finally {
      client.disconnect();
    }
  });

  it("while the server is unreachable, fails commands at once rather than queueing them", async () => {
    const client = await clientOfNothing();
    try {
      await assert.rejects(client.get("k"), /enableOfflineQueue options is false/);
    } finally {
      client.disconnect();
    }
  });

  it("reconnects forever, 100 ms more each attempt up to maxReconnectDelayMs", async () => {
    for (const [max, expected] of [
      [undefined, [100, 300, 1000, 1000]],
      [250, [100, 250, 250, 250]],
    ] as const) {
      const client = await clientOfNothing(max === undefined ? {} : { maxReconnectDelayMs: max });
      try {
        assert.ok(client instanceof Redis);
        const retry = client.options.retryStrategy;
        assert.ok(retry);
        assert.deepEqual(
          [1, 3, 10, 10_000].map((attempt) => retry(attempt)),
          expected,
        );
      } finally {
        client.disconnect();
      }
    }
  });

  it("builds a Sentinel client that follows failovers, with the password for both", () => {
    const client = createRedisClient({
      topology: {
        kind: "sentinel",
        sentinels: [{ host: "127.0.0.1", port: 1 }],
        name: "mymaster",
        password: "pw",
      },
    });
    client.on("error", () => undefined);
    try {
      assert.ok(client instanceof Redis);
      const o = client.options;
      assert.deepEqual(
        [
          o.name,
          o.password,
          o.sentinelPassword,
          o.failoverDetector,
          o.enableOfflineQueue,
          o.commandTimeout,
        ],
        ["mymaster", "pw", "pw", true, false, 1000],
      );
      assert.equal(typeof o.sentinelRetryStrategy, "function");
    } finally {
      client.disconnect();
    }
  });

  it("builds a Cluster client that re-reads the slot map every slotsRefreshIntervalMs", () => {
    const client = createRedisClient({
      topology: { kind: "cluster", nodes: [{ host: "127.0.0.1", port: 1 }], password: "pw" },
      slotsRefreshIntervalMs: 500,
    });
    client.on("error", () => undefined);
    try {
      assert.ok(client instanceof Cluster);
      const o = client.options;
      assert.deepEqual(
        [
          o.slotsRefreshInterval,
          o.enableOfflineQueue,
          o.redisOptions?.password,
          o.redisOptions?.commandTimeout,
        ],
        [500, false, "pw", 1000],
      );
    } finally {
      client.disconnect();
    }
  });
});

describe("waitForRedisReady", () => {
  it("resolves at once for a ready client, and on the ready event for one connecting", async () => {
    const dir = dirs.make();
    const server = await startRedisServerProcess({ dir, port: "unix" });
    assert.ok("path" in server.location);
    const client = new Redis({ path: server.location.path });
    try {
      await waitForRedisReady(client, 10_000);
      assert.equal(client.status, "ready");
      await waitForRedisReady(client, 0);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  it("rejects after timeoutMs for a client that never gets ready", async () => {
    const client = await clientOfNothing();
    try {
      await assert.rejects(
        waitForRedisReady(client, 200),
        /^Error: Redis was not ready within 200 ms$/,
      );
      // It stopped listening for the ready event.
      assert.equal(client.listenerCount("ready"), 0);
    } finally {
      client.disconnect();
    }
  });
});
