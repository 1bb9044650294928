import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { newBenchUsers } from "../../bench/bench-users.js";
import { bearerHttpLoad, INTROSPECT_PATH, introspectFrames } from "../../bench/check-loads.js";
import { grpcCreated, restCreated } from "../../bench/create-answers.js";
import { grpcFrame } from "../../bench/grpc-frame.js";
import { LADDER_STEPS, type LadderPath } from "../../bench/ladder/ladder-steps.js";
import type { LoadResult } from "../../bench/load-result.js";
import { CREATE_PATH } from "../../bench/phases/create.js";
import { startProcessGroup } from "../../bench/process-group.js";
import { runRawGrpcLoad } from "../../bench/raw-grpc-load.js";
import { runRawHttpLoad } from "../../bench/raw-http-load.js";
import { seedTokens } from "../../bench/seed-tokens.js";
import { type ServiceProcess, startServiceProcess } from "../../bench/service-process.js";
import { createSigner } from "../../bench/signed-requests.js";
import { createPublicKeyStore } from "../../src/store/public-key-store.js";
import { createTokenStore } from "../../src/store/token-store.js";
import { STORE_SETTINGS } from "../support/store-settings.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";

// The ladder's servers (bench/ladder/ladder-server.ts) answer each path as
// the service does, at the floor and with every hand-built layer on: a rung
// that failed its requests would price nothing.
describe("bench ladder servers", () => {
  let redis: TestRedis;
  let client: Redis;
  let dir: string;
  let keysFile: string;
  let tokens: string[];
  const users = newBenchUsers(3);
  const signer = createSigner(users);

  before(async () => {
    redis = await startTestRedisServer();
    client = new Redis(redis.url);
    const keys = createPublicKeyStore({ ...STORE_SETTINGS, redis: { client } });
    for (const user of users) {
      await keys.put(user.userId, user.publicKeyHex);
    }
    const store = createTokenStore({ ...STORE_SETTINGS, redis: { client } });
    tokens = (await seedTokens({ store, users, count: 6, named: false, lifetimeMs: 600_000 })).map(
      (t) => t.token,
    );
    dir = mkdtempSync(join(tmpdir(), "perps-ladder-test-"));
    keysFile = join(dir, "keys.json");
    writeFileSync(
      keysFile,
      JSON.stringify(Object.fromEntries(users.map((u) => [u.userId, u.publicKeyHex]))),
    );
  });
  after(async () => {
    client.disconnect();
    await redis.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Six requests of the path against a server, each a success only if the service's would be. */
  function load(path: LadderPath, port: number): Promise<LoadResult> {
    switch (path) {
      case "introspect":
        return runRawGrpcLoad({
          address: `127.0.0.1:${port}`,
          path: INTROSPECT_PATH,
          frames: introspectFrames(tokens),
          once: true,
          concurrency: 2,
          seconds: 0,
          accept: (length) => length > 0,
        });
      case "forward-auth":
        return bearerHttpLoad(`http://127.0.0.1:${port}`, tokens, { concurrency: 2 }, 0.3)();
      case "grpc-create":
        return runRawGrpcLoad({
          address: `127.0.0.1:${port}`,
          path: CREATE_PATH,
          frames: signer.creates(6).map((r) => grpcFrame(r.binary)),
          once: true,
          concurrency: 2,
          seconds: 0,
          accept: grpcCreated,
        });
      case "rest-create":
        return runRawHttpLoad({
          url: `http://127.0.0.1:${port}`,
          method: "POST",
          path: "/user/tokens",
          bodies: signer.creates(6).map((r) => r.json),
          connections: 2,
          accept: restCreated,
        });
    }
  }

  const climbs: { path: LadderPath; lookup: "redis" | "memory" }[] = [
    ...(Object.keys(LADDER_STEPS) as LadderPath[]).map((path) => ({
      path,
      lookup: "redis" as const,
    })),
    { path: "introspect", lookup: "memory" },
    { path: "forward-auth", lookup: "memory" },
  ];
  for (const { path, lookup } of climbs) {
    // The floor, and the highest rung built here (the last one is the service itself).
    const rungs = [0, LADDER_STEPS[path].length - 2];
    for (const step of rungs) {
      it(`${path}, step ${step} (${LADDER_STEPS[path][step]?.layer}), records from ${lookup}: every answer a success`, async () => {
        let server: ServiceProcess | undefined;
        try {
          server = await startServiceProcess({
            redisUrl: redis.url,
            main: "bench/ladder/ladder-server.ts",
            args: [`--path=${path}`, `--step=${step}`],
            env: { LADDER_KEYS_FILE: keysFile, LADDER_LOOKUP: lookup },
          });
          // Twice: from memory, the second load is answered without Redis.
          for (let i = 0; i < (lookup === "memory" ? 2 : 1); i++) {
            const result = await load(path, server.publicPort);
            assert.equal(result.errors, 0, JSON.stringify(result.failures));
            assert.ok(result.ok >= 6, `${result.ok} successes`);
          }
        } finally {
          await server?.stop();
        }
      });
    }
  }

  it("runs a floor as several processes on one port, each serving", async () => {
    const group = await startProcessGroup(2, {
      redisUrl: redis.url,
      main: "bench/check-floor-server.ts",
    });
    try {
      assert.equal(group.rssPerProcess().filter((rss) => rss > 0).length, 2);
      const result = await bearerHttpLoad(
        `http://127.0.0.1:${group.publicPort}`,
        tokens,
        { concurrency: 8 },
        0.5,
      )();
      assert.equal(result.errors, 0);
      assert.ok(result.ok > 0);
    } finally {
      await group.stop();
    }
  });
});
