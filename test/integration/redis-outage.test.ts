import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { Redis } from "ioredis";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../src/gen/health/v1/health_pb.js";
import { connectError } from "../support/connect-error.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { newUser, signedCreate, signedDelete } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`condition not met within ${timeoutMs} ms`);
}

describe("health, readiness and a Redis outage", () => {
  let redis: TestRedis;
  let service: TestService;
  let health: ReturnType<typeof createGrpcClient<typeof Health.method>>;
  let keys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  const tokens = () =>
    createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
    );

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redisUrl: redis.url });
    health = createGrpcClient(Health, service.internalAddress);
    keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
  });

  after(async () => {
    health.close();
    keys.close();
    grpcTokens.close();
    await service.stop();
    await redis.dispose();
  });

  it("reports live and ready over HTTP and grpc.health.v1", async () => {
    for (const base of [service.publicUrl, service.internalUrl]) {
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
    }
    for (const name of [
      "",
      "perps.token.v1.TokenService",
      "perps.token.v1.UserKeyService",
      "perps.token.v1.TokenIntrospectionService",
    ]) {
      const res = await health.check({ service: name });
      assert.equal(res.status, ServingStatus.SERVING);
    }
    await assert.rejects(health.check({ service: "nope.Service" }), (err) =>
      isGrpcError(err, GrpcStatus.NOT_FOUND),
    );
  });

  it("answers UNAVAILABLE within about a second while Redis is down, then recovers without a restart", async () => {
    const user = await newUser();
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    const kept = await tokens().createToken(await signedCreate(user, { name: "kept" }));

    await redis.stop();
    // Connect (public) and gRPC (internal) both fail fast with UNAVAILABLE, never INTERNAL.
    const started = Date.now();
    const err = await connectError(tokens().createToken(await signedCreate(user)));
    assert.equal(err.code, Code.Unavailable);
    assert.ok(!/ECONNREFUSED|redis|stream/i.test(err.rawMessage), err.rawMessage);
    await assert.rejects(grpcTokens.createToken(await signedCreate(user)), (e) =>
      isGrpcError(e, GrpcStatus.UNAVAILABLE),
    );
    await assert.rejects(keys.putUserKey({ userId: user.userId, publicKey: user.publicKey }), (e) =>
      isGrpcError(e, GrpcStatus.UNAVAILABLE),
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3000, `three failing calls took ${elapsed} ms`);

    assert.equal((await fetch(`${service.publicUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${service.publicUrl}/readyz`)).status, 503);
    assert.equal((await health.check({ service: "" })).status, ServingStatus.NOT_SERVING);
    assert.ok(service.logs.some((l) => l.includes('"code":"Unavailable"')));

    await redis.restart();
    await waitFor(async () => (await fetch(`${service.publicUrl}/readyz`)).status === 200, 5000);
    assert.equal((await health.check({ service: "" })).status, ServingStatus.SERVING);
    // Nothing persisted was lost (AOF), and the service works again.
    await tokens().deleteToken(await signedDelete(user, kept.id));
    await tokens().createToken(await signedCreate(user, { name: "after" }));
  });

  it("answers UNAVAILABLE within about a second while Redis is too slow", async () => {
    const user = await newUser();
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    const blocker = new Redis(redis.url);
    try {
      // A script that spins for 2 s blocks the server; the service's commands time out after 1 s.
      const sleeping = blocker.eval(
        "local t0 = redis.call('TIME') repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 2000000 return 1",
        0,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      const err = await connectError(tokens().createToken(await signedCreate(user)));
      const elapsed = Date.now() - started;
      assert.equal(err.code, Code.Unavailable);
      assert.ok(elapsed >= 900 && elapsed < 1900, `answered after ${elapsed} ms`);
      await sleeping;
    } finally {
      blocker.disconnect();
    }
    // Once Redis answers again, so does the service.
    await tokens().createToken(await signedCreate(user));
  });
});

describe("graceful shutdown", () => {
  it("finishes a request in flight, then stops", async () => {
    const redis = await startTestRedis();
    const service = await startTestService({ redisUrl: redis.url });
    try {
      const user = await newUser();
      const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      keys.close();
      const req = await signedCreate(user, { name: "in flight" });
      const body = JSON.stringify({
        signature: req.signature,
        timestamp: Number(req.timestamp),
        userId: req.userId,
        name: req.name,
      });
      // Send half the body, stop the service, then send the rest.
      const url = new URL("/user/tokens", service.publicUrl);
      const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const r = request(
          url,
          { method: "POST", headers: { "content-type": "application/json" } },
          (res) => {
            let text = "";
            res.on("data", (c: Buffer) => {
              text += c.toString();
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        r.on("error", reject);
        r.write(body.slice(0, 40));
        setTimeout(() => r.end(body.slice(40)), 300);
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopped = service.stop();
      const res = await response;
      assert.equal(res.status, 201, res.text);
      assert.match(res.text, /"token":"pt_/);
      await stopped;
      // No longer accepting.
      await assert.rejects(fetch(`${service.publicUrl}/healthz`));
    } finally {
      await redis.dispose();
    }
  });
});
