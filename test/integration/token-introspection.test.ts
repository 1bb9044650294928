import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { crc32 } from "node:zlib";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { generateToken, tokenIdOf } from "@perps/token-client/protocol";
import { redisKeysOf } from "../../src/store/keys.js";
import { createGrpcClient, type GrpcClient, isGrpcError } from "../support/grpc-client.js";
import { samples } from "../support/prometheus-samples.js";
import { serviceSuite } from "../support/service-suite.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

const INACTIVE = {
  active: false,
  userId: "",
  tokenId: "",
  name: "",
  expiresAt: "",
  expiresAtMs: 0n,
};

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `body` with the checksum the service expects: a well-formed token, whatever the body says. */
function withChecksum(body: string): string {
  let rest = crc32(body);
  let sum = "";
  for (let i = 0; i < 6; i++) {
    sum = BASE62.charAt(rest % 62) + sum;
    rest = Math.floor(rest / 62);
  }
  return body + sum;
}

type Answer = typeof INACTIVE;

/** IntrospectToken's read limit (src/server/api-services.ts), as docs/security.md states it. */
const READ_MAX_BYTES = 64 * 1024;

/** The answer's fields, without protobuf-es' `$typeName`. */
function fields({ active, userId, tokenId, name, expiresAt, expiresAtMs }: Answer): Answer {
  return { active, userId, tokenId, name, expiresAt, expiresAtMs };
}

/** The service's count of `token.lookup` Redis calls, from its /metrics. */
async function lookups(service: TestService): Promise<number> {
  const text = await (await fetch(`${service.internalUrl}/metrics`)).text();
  return (
    samples(text).get('perps_token_redis_duration_seconds_count{operation="token.lookup"}') ?? 0
  );
}

async function introspections(service: TestService, outcome: string): Promise<number> {
  const text = await (await fetch(`${service.internalUrl}/metrics`)).text();
  return samples(text).get(`perps_token_introspections_total{outcome="${outcome}"}`) ?? 0;
}

describe("IntrospectToken", () => {
  let redis: TestRedis;
  // Two instances on one Redis: what one deletes, the other must see at once.
  let first: TestService;
  let second: TestService;
  let keys: GrpcClient<typeof UserKeyService.method>;
  let grpcIntrospect: GrpcClient<typeof TokenIntrospectionService.method>;
  let grpcIntrospectSecond: GrpcClient<typeof TokenIntrospectionService.method>;

  const tokens = (service: TestService) =>
    createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
    );
  const connectIntrospect = (service: TestService) =>
    createClient(
      TokenIntrospectionService,
      createConnectTransport({ baseUrl: service.internalUrl, httpVersion: "1.1" }),
    );

  /** IntrospectToken over gRPC (@grpc/grpc-js) and Connect on both instances: all four must agree. */
  async function introspectEverywhere(token: string) {
    const answers = await Promise.all([
      grpcIntrospect.introspectToken({ token }),
      grpcIntrospectSecond.introspectToken({ token }),
      connectIntrospect(first).introspectToken({ token }),
      connectIntrospect(second).introspectToken({ token }),
    ]);
    const plain = answers.map(fields);
    for (const other of plain.slice(1)) {
      assert.deepEqual(other, plain[0]);
    }
    const answer = plain[0];
    assert.ok(answer !== undefined);
    return answer;
  }

  async function registered(userId?: string): Promise<TestUser> {
    const user = await newUser(userId);
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  before(async () => {
    redis = await startTestRedis();
    first = await startTestService({ redis: redis.topology });
    second = await startTestService({ redis: redis.topology });
    keys = createOperatorGrpcClient(UserKeyService, first.internalAddress);
    grpcIntrospect = createGrpcClient(TokenIntrospectionService, first.internalAddress);
    grpcIntrospectSecond = createGrpcClient(TokenIntrospectionService, second.internalAddress);
  });

  after(async () => {
    keys.close();
    grpcIntrospect.close();
    grpcIntrospectSecond.close();
    await first.stop();
    await second.stop();
    await redis.dispose();
  });

  it("a created token is active with its user, id, name and the expiry Redis keeps", async () => {
    const user = await registered();
    for (const name of ["bot ü", undefined]) {
      const created = await tokens(first).createToken(
        await signedCreate(user, { expiresIn: 3600n, ...(name === undefined ? {} : { name }) }),
      );
      const expiresAtMs = await first.redis.pexpiretime(redisKeysOf(user.userId).token(created.id));
      assert.ok(expiresAtMs > Date.now());
      assert.deepEqual(await introspectEverywhere(created.token), {
        active: true,
        userId: user.userId,
        tokenId: created.id,
        name: name ?? "",
        expiresAt: created.expiresAt,
        expiresAtMs: BigInt(expiresAtMs),
      });
    }
  });

  it("once DeleteToken answered, the token is inactive on every instance", async () => {
    const user = await registered();
    for (const deleter of [first, second]) {
      const created = await tokens(first).createToken(await signedCreate(user, { name: "gone" }));
      assert.equal((await introspectEverywhere(created.token)).active, true);
      await tokens(deleter).deleteToken(await signedDelete(user, created.id));
      // At once, on the instance that did not delete it as well: nothing is cached.
      assert.deepEqual(await introspectEverywhere(created.token), INACTIVE);
    }
  });

  it("a token is inactive from the millisecond it expires", async () => {
    const user = await registered();
    const created = await tokens(first).createToken(await signedCreate(user, { expiresIn: 1n }));
    const live = await introspectEverywhere(created.token);
    assert.equal(live.active, true);
    const expiresAtMs = Number(live.expiresAtMs);
    assert.ok(expiresAtMs - Date.now() <= 1000);
    while (Date.now() <= expiresAtMs) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.deepEqual(await introspectEverywhere(created.token), INACTIVE);
  });

  it("users are isolated; a UUID in upper case is the lowercase user", async () => {
    const lower = randomUUID();
    const upperUser = await registered(lower.toUpperCase());
    const created = await tokens(first).createToken(
      await signedCreate(upperUser, { name: "case" }),
    );
    const answer = await introspectEverywhere(created.token);
    assert.equal(answer.active, true);
    assert.equal(answer.userId, lower);

    const other = await registered();
    const theirs = await tokens(first).createToken(await signedCreate(other, { name: "case" }));
    assert.equal((await introspectEverywhere(theirs.token)).userId, other.userId);
    // A's token with B's UUID in it (checksum fixed): names B's record of that id, which is not there.
    const body = Buffer.from(created.token.slice(3, -6), "base64url");
    Buffer.from(other.userId.replace(/-/g, ""), "hex").copy(body, 0);
    assert.deepEqual(
      await introspectEverywhere(withChecksum(`pt_${body.toString("base64url")}`)),
      INACTIVE,
    );
    // B's id in A's token: B's record, but not B's secret.
    const swapped = Buffer.from(theirs.token.slice(3, -6), "base64url");
    body.copy(swapped, 28, 28);
    assert.deepEqual(
      await introspectEverywhere(withChecksum(`pt_${swapped.toString("base64url")}`)),
      INACTIVE,
    );
  });

  it("malformed tokens are inactive without a Redis call; well-formed unknown ones cost one", async () => {
    const user = await registered();
    const created = await tokens(first).createToken(await signedCreate(user));
    const token = created.token;
    const malformed = [
      "",
      `xx_${token.slice(3)}`,
      `PT_${token.slice(3)}`,
      `${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`,
      `${token.slice(0, 20)}${token[20] === "a" ? "b" : "a"}${token.slice(21)}`,
      token.slice(0, -1),
      `${token}A`,
      `Bearer ${token}`,
      ` ${token}`,
      "pt_",
      // As long as the request fits in the 64 KiB read limit (in JSON, 12 bytes besides the string).
      "x".repeat(READ_MAX_BYTES - 12),
      `pt_${"A".repeat(READ_MAX_BYTES - 15)}`,
    ];
    const before = await lookups(first);
    const inactiveBefore = await introspections(first, "inactive");
    for (const bad of malformed) {
      assert.deepEqual(fields(await grpcIntrospect.introspectToken({ token: bad })), INACTIVE);
      assert.deepEqual(
        fields(await connectIntrospect(first).introspectToken({ token: bad })),
        INACTIVE,
      );
    }
    assert.equal(await lookups(first), before, "no Redis call for a malformed token");
    assert.equal(await introspections(first, "inactive"), inactiveBefore + 2 * malformed.length);

    // Well-formed but unknown: one read each, and inactive.
    const unknown = [
      generateToken(user.userId, tokenIdOf(randomBytes(32))),
      generateToken(randomUUID(), created.id),
    ];
    for (const t of unknown) {
      assert.deepEqual(fields(await grpcIntrospect.introspectToken({ token: t })), INACTIVE);
    }
    assert.equal(await lookups(first), before + unknown.length);

    const activeBefore = await introspections(first, "active");
    assert.equal((await grpcIntrospect.introspectToken({ token })).active, true);
    assert.equal(await introspections(first, "active"), activeBefore + 1);
  });

  it("a request over the 64 KiB read limit is RESOURCE_EXHAUSTED, on gRPC and Connect", async () => {
    // Protobuf (both clients here): 1 byte of tag and 3 of length besides the string.
    await assert.rejects(
      grpcIntrospect.introspectToken({ token: "x".repeat(READ_MAX_BYTES - 3) }),
      (err) => isGrpcError(err, GrpcStatus.RESOURCE_EXHAUSTED),
    );
    await assert.rejects(
      connectIntrospect(first).introspectToken({ token: "x".repeat(READ_MAX_BYTES - 3) }),
      (err) => err instanceof ConnectError && err.code === Code.ResourceExhausted,
    );
  });

  it("is not served on the public listener", async () => {
    const grpcPublic = createGrpcClient(TokenIntrospectionService, first.publicAddress);
    try {
      await assert.rejects(grpcPublic.introspectToken({ token: "pt_x" }), (err) =>
        isGrpcError(err, GrpcStatus.UNIMPLEMENTED),
      );
    } finally {
      grpcPublic.close();
    }
    const res = await fetch(
      `${first.publicUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
      { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
    );
    assert.equal(res.status, 404);
    await res.body?.cancel();
  });
});

describe("IntrospectToken while Redis is down", () => {
  const { redis, service } = serviceSuite({ startRedis: startTestRedisServer });

  it("answers UNAVAILABLE within about a second, not a hang, and works again after", async () => {
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    const grpcIntrospect = createGrpcClient(TokenIntrospectionService, service.internalAddress);
    const connectIntrospect = createClient(
      TokenIntrospectionService,
      createConnectTransport({ baseUrl: service.internalUrl, httpVersion: "1.1" }),
    );
    try {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      const created = await createClient(
        TokenService,
        createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
      ).createToken(await signedCreate(user));

      await redis.stop();
      const started = Date.now();
      await assert.rejects(grpcIntrospect.introspectToken({ token: created.token }), (err) =>
        isGrpcError(err, GrpcStatus.UNAVAILABLE),
      );
      await assert.rejects(
        connectIntrospect.introspectToken({ token: created.token }),
        (err) => err instanceof ConnectError && err.code === Code.Unavailable,
      );
      const elapsed = Date.now() - started;
      assert.ok(elapsed < 4000, `two failing calls took ${elapsed} ms`);
      // A malformed token needs no Redis: still an answer.
      assert.equal((await grpcIntrospect.introspectToken({ token: "nope" })).active, false);

      await redis.restart();
      const deadline = Date.now() + 10_000;
      for (;;) {
        const answer = await grpcIntrospect
          .introspectToken({ token: created.token })
          .catch(() => undefined);
        if (answer?.active === true) {
          break;
        }
        assert.ok(Date.now() < deadline, "IntrospectToken did not recover");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      keys.close();
      grpcIntrospect.close();
    }
  });
});
