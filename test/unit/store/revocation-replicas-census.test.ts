import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Cluster, Redis } from "ioredis";
import { freePorts } from "../../../src/process/ports.js";
import {
  type RedisServerProcess,
  startRedisServerProcess,
} from "../../../src/redis/redis-server-process.js";
import { startReplicaCensus } from "../../../src/store/revocation-replicas.js";
import { startTestRedisCluster } from "../../support/test-redis-cluster.js";
import { waitForReplicaAcks } from "../../support/test-redis-sentinel.js";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, "not within 10 s");
    await sleep(20);
  }
}

// The census of a Sentinel topology asks the primary the client is on (INFO
// replication), so a client of the primary itself stands for one here.
describe("startReplicaCensus", () => {
  it("Sentinel: none while the primary has no replica, then seen, and still seen once it is gone", async () => {
    const root = mkdtempSync(join(tmpdir(), "perps-census-"));
    const [primaryPort = 0, replicaPort = 0] = await freePorts(2);
    const servers: RedisServerProcess[] = [];
    const client = new Redis({ port: primaryPort, maxRetriesPerRequest: 0, lazyConnect: true });
    try {
      servers.push(
        await startRedisServerProcess({ dir: join(root, "primary"), port: primaryPort }),
      );
      await client.connect();
      const census = startReplicaCensus({ kind: "sentinel", redis: { client }, intervalMs: 50 });
      try {
        await until(() => census.hasReplicas !== undefined);
        assert.equal(census.hasReplicas, false);
        const replica = await startRedisServerProcess({
          dir: join(root, "replica"),
          port: replicaPort,
          extraArgs: [
            "--replicaof",
            "127.0.0.1",
            String(primaryPort),
            "--repl-diskless-sync-delay",
            "0",
          ],
        });
        servers.push(replica);
        await waitForReplicaAcks(primaryPort);
        await until(() => census.hasReplicas === true);
        await replica.stop();
        await sleep(200);
        assert.equal(
          census.hasReplicas,
          true,
          "a replica gone (a failover's moment) is still counted",
        );
      } finally {
        census.close();
      }
    } finally {
      client.disconnect();
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    }
  });

  for (const replicasPerPrimary of [1, 0]) {
    it(`Cluster: the slot map's replicas (${replicasPerPrimary} a primary)`, async () => {
      const cluster = await startTestRedisCluster({ replicasPerPrimary });
      const client = new Cluster(cluster.topology.nodes);
      try {
        const census = startReplicaCensus({ kind: "cluster", redis: { client }, intervalMs: 50 });
        try {
          await until(() => census.hasReplicas !== undefined);
          assert.equal(census.hasReplicas, replicasPerPrimary > 0);
        } finally {
          census.close();
        }
      } finally {
        client.disconnect();
        await cluster.dispose();
      }
    });
  }

  it("a URL or a socket: no replica looked for, none counted", () => {
    const client = new Redis({ lazyConnect: true });
    for (const kind of ["url", "socket"] as const) {
      const census = startReplicaCensus({ kind, redis: { client } });
      assert.equal(census.hasReplicas, false);
      census.close();
    }
  });
});
