import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { ErrorInfoSchema } from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createTokenMessage } from "@perps/token-client/protocol";
import { allKeys } from "../support/all-keys.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { grpcStatusDetails } from "../support/grpc-status-details.js";
import { type Fields, restJson } from "../support/rest-json.js";
import {
  newUser,
  signBytes,
  signedCreate,
  signedDelete,
  type TestUser,
} from "../support/signing.js";
import { suiteValue } from "../support/suite-value.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

/** The REST JSON of a signed request (bigints as JSON numbers). */
async function rest(service: TestService, method: "POST" | "DELETE", fields: Fields) {
  const res = await fetch(`${service.publicUrl}/user/tokens`, {
    method,
    headers: { "content-type": "application/json" },
    body: restJson(fields),
  });
  const text = await res.text();
  const body = JSON.parse(text) as {
    code?: number;
    message?: string;
    id?: string;
    token?: string;
    details?: unknown[];
  };
  return { status: res.status, body, text, retryAfter: res.headers.get("retry-after") };
}

/** A successful create signed 1 ms back, so that one signed next is another request. */
async function createdEarlier(h: Harness, user: TestUser): Promise<void> {
  const fields = await signedCreate(user, { timestamp: BigInt(Date.now() - 1) });
  assert.equal((await rest(h.service, "POST", fields)).status, 201);
}

interface Harness {
  redis: TestRedis;
  service: TestService;
  keys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  tokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  user(): Promise<TestUser>;
  close(): Promise<void>;
}

async function harness(limits: { maxActive?: number; ratePerMinute?: number } = {}) {
  const redis = await startTestRedis();
  const service = await startTestService({
    redis: redis.topology,
    ...(limits.maxActive === undefined ? {} : { tokenMaxActivePerUser: limits.maxActive }),
    ...(limits.ratePerMinute === undefined
      ? {}
      : { tokenRateLimitPerMinute: limits.ratePerMinute }),
  });
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  const tokens = createGrpcClient(TokenService, service.internalAddress);
  const h: Harness = {
    redis,
    service,
    keys,
    tokens,
    async user() {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      return user;
    },
    async close() {
      keys.close();
      tokens.close();
      await service.stop();
      await redis.dispose();
    },
  };
  return h;
}

describe("replay protection", () => {
  const h = suiteValue("harness", () => harness());

  it("refuses an accepted request sent again once its token is gone: 401, not a new token", async () => {
    const user = await h.user();
    const req = await signedCreate(user, { name: "once" });
    const created = await rest(h.service, "POST", req);
    assert.equal(created.status, 201);
    await rest(h.service, "DELETE", await signedDelete(user, created.body.id ?? ""));
    const again = await rest(h.service, "POST", req);
    assert.equal(again.status, 401);
    assert.deepEqual(again.body, { code: 16, message: "Signature already used", details: [] });
    await assert.rejects(
      h.tokens.createToken(req),
      (err) =>
        isGrpcError(err, GrpcStatus.UNAUTHENTICATED) && err.details === "Signature already used",
    );
  });

  it("refuses an accepted delete sent again", async () => {
    const user = await h.user();
    const created = await rest(h.service, "POST", await signedCreate(user));
    const del = await signedDelete(user, created.body.id ?? "");
    assert.equal((await rest(h.service, "DELETE", del)).status, 200);
    const again = await rest(h.service, "DELETE", del);
    assert.equal(again.status, 401);
    assert.equal(again.body.message, "Signature already used");
  });

  it("lets exactly one of 20 concurrent copies through", async () => {
    const user = await h.user();
    const req = await signedCreate(user);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => rest(h.service, "POST", req)),
    );
    const winners = results.filter((r) => r.status === 201);
    assert.equal(winners.length, 1);
    const id = winners[0]?.body.id ?? "";
    // The others are replays of an accepted create whose token is live.
    for (const r of results.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 409);
      assert.equal(r.body.message, `Signature already used: this request created token ${id}`);
    }
  });

  it("is keyed on the message, not the signature bytes", async () => {
    const user = await h.user();
    const other = await newUser(user.userId);
    await h.keys.putUserKey({ userId: user.userId, publicKey: other.publicKey });
    const req = await signedCreate(user);
    assert.equal((await rest(h.service, "POST", req)).status, 201);
    // Same message, another valid signature (the user's second key).
    const signature = await signBytes(
      other.secretKey,
      createTokenMessage({ ...req, expiresIn: undefined, name: undefined }),
    );
    const again = await rest(h.service, "POST", { ...req, signature });
    assert.match(again.body.message ?? "", /^Signature already used/);
  });

  it("remembers the message's SHA-256 in the user's slot for the whole window", async () => {
    const user = await h.user();
    const req = await signedCreate(user);
    await rest(h.service, "POST", req);
    const message = createTokenMessage({ ...req, expiresIn: undefined, name: undefined });
    // The raw SHA-256 (32 bytes) under `{<tag>}p`, the tag being the user's 16 UUID bytes.
    const digest = createHash("sha256").update(message).digest();
    const tag = Buffer.from(user.userId.replace(/-/g, ""), "hex").toString("base64url");
    const key = `{${tag}}p`;
    assert.deepEqual(await h.service.redis.zrangeBuffer(key, 0, -1), [digest]);
    const until = Number(await h.service.redis.zscore(key, digest));
    assert.ok(until - Date.now() > 240_000, `remembered for ${until - Date.now()} ms`);
    assert.ok((await h.service.redis.pttl(key)) > 240_000);
  });
});

describe("token storage", () => {
  const h = suiteValue("harness", () => harness());

  it("no key or value in Redis contains a token", async () => {
    const user = await h.user();
    const tokens: string[] = [];
    for (const name of ["named", undefined]) {
      const res = await rest(h.service, "POST", await signedCreate(user, { name }));
      tokens.push(res.body.token ?? "");
    }
    // Values are binary (digests), so everything is compared as bytes.
    const dump: Buffer[] = [];
    for (const key of await allKeys(h.service.redis, "*")) {
      dump.push(Buffer.from(key));
      const type = await h.service.redis.type(key);
      if (type === "hash") {
        const fields = Object.entries(await h.service.redis.hgetallBuffer(key));
        dump.push(...fields.flatMap(([field, value]) => [Buffer.from(field), value]));
      } else if (type === "zset") {
        dump.push(...(await h.service.redis.zrangeBuffer(key, 0, -1)));
      } else if (type === "set") {
        dump.push(...(await h.service.redis.smembersBuffer(key)));
      } else if (type === "string") {
        dump.push((await h.service.redis.getBuffer(key)) ?? Buffer.alloc(0));
      }
    }
    const bytes = Buffer.concat(dump.flatMap((part) => [part, Buffer.from("\n")]));
    for (const token of tokens) {
      assert.ok(token.startsWith("pt_"));
      assert.ok(!bytes.includes(token));
      assert.ok(!bytes.includes(token.slice(3, 30)), "no part of the secret either");
      const secret = Buffer.from(token.slice(3, 46), "base64url");
      assert.equal(secret.length, 32);
      assert.ok(!bytes.includes(secret.subarray(0, 16)), "nor the secret's raw bytes");
    }
  });
});

describe("abuse limits", () => {
  it("rate-limits signed calls per user with 429 and Retry-After; bad signatures cost nothing", async () => {
    const h = await harness({ ratePerMinute: 5 });
    try {
      const user = await h.user();
      const stranger = await newUser(user.userId);
      // Distinct timestamps from one base: equal messages would be replays.
      const base = Date.now();
      for (let i = 0; i < 8; i++) {
        const forged = await signedCreate(stranger, { timestamp: BigInt(base - i) });
        assert.equal((await rest(h.service, "POST", forged)).status, 401);
      }
      for (let i = 0; i < 5; i++) {
        const ok = await signedCreate(user, { timestamp: BigInt(base - 100 - i) });
        assert.equal((await rest(h.service, "POST", ok)).status, 201);
      }
      const limited = await rest(h.service, "POST", await signedCreate(user));
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 8);
      const retry = Number(limited.retryAfter);
      assert.ok(retry >= 1 && retry <= 12, `Retry-After ${limited.retryAfter}`);
      await assert.rejects(h.tokens.deleteToken(await signedDelete(user, "x")), (err) =>
        isGrpcError(err, GrpcStatus.RESOURCE_EXHAUSTED),
      );
      // Another user is not affected.
      const other = await h.user();
      assert.equal((await rest(h.service, "POST", await signedCreate(other))).status, 201);
    } finally {
      await h.close();
    }
  });

  it("caps live tokens per user (session ones included); a freed slot can be used again", async () => {
    const h = await harness({ maxActive: 3 });
    try {
      const user = await h.user();
      const short = await rest(h.service, "POST", await signedCreate(user, { expiresIn: 2n }));
      const named = await rest(h.service, "POST", await signedCreate(user, { name: "n" }));
      assert.equal(named.status, 201);
      assert.equal((await rest(h.service, "POST", await signedCreate(user))).status, 201);
      const full = await rest(h.service, "POST", await signedCreate(user, { name: "m" }));
      assert.equal(full.status, 429);
      assert.equal(full.body.code, 8);
      assert.match(full.body.message ?? "", /already has 3 live tokens/);
      // Retry-After says when the earliest token expires.
      assert.ok(
        Number(full.retryAfter) >= 1 && Number(full.retryAfter) <= 2,
        String(full.retryAfter),
      );
      await rest(h.service, "DELETE", await signedDelete(user, named.body.id ?? ""));
      assert.equal((await rest(h.service, "POST", await signedCreate(user))).status, 201);
      assert.equal((await rest(h.service, "POST", await signedCreate(user))).status, 429);
      // The 2-second token expires and frees its slot.
      assert.equal(short.status, 201);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      assert.equal((await rest(h.service, "POST", await signedCreate(user))).status, 201);
    } finally {
      await h.close();
    }
  });
});

/** The google.rpc.ErrorInfo of a replayed create, as the issue fixes it. */
function alreadyCreatedInfo(tokenId: string) {
  return { reason: "TOKEN_ALREADY_CREATED", domain: "perps-tokens", metadata: { tokenId } };
}

describe("a create whose answer was lost (finding 1)", () => {
  const h = suiteValue("harness", () => harness());

  it("the same request again → 409 naming the token in an ErrorInfo, over REST, Connect and gRPC; never the token", async () => {
    const user = await h.user();
    const req = await signedCreate(user, { name: "lost" });
    // The answer that never reached the client.
    const lost = await rest(h.service, "POST", req);
    assert.equal(lost.status, 201);
    const id = lost.body.id ?? "";
    const message = `Signature already used: this request created token ${id}`;

    const again = await rest(h.service, "POST", req);
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      code: 6,
      message,
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", ...alreadyCreatedInfo(id) }],
    });
    assert.ok(!again.text.includes("pt_"), again.text);

    const connect = createClient(
      TokenService,
      createConnectTransport({ baseUrl: h.service.publicUrl, httpVersion: "1.1" }),
    );
    const connectErr = await connect.createToken(req).then(
      () => assert.fail("the replay succeeded"),
      (e: unknown) => e,
    );
    assert.ok(connectErr instanceof ConnectError, String(connectErr));
    assert.equal(connectErr.code, Code.AlreadyExists);
    assert.equal(connectErr.rawMessage, message);
    const [info, ...more] = connectErr.findDetails(ErrorInfoSchema);
    assert.deepEqual(more, []);
    assert.deepEqual(
      { reason: info?.reason, domain: info?.domain, metadata: info?.metadata },
      alreadyCreatedInfo(id),
    );

    const grpcErr = await h.tokens.createToken(req).then(
      () => assert.fail("the replay succeeded"),
      (e: unknown) => e,
    );
    assert.ok(isGrpcError(grpcErr, GrpcStatus.ALREADY_EXISTS), String(grpcErr));
    // connect-node percent-encodes ':' in grpc-message, which grpc-js' decodeURI leaves as is.
    assert.equal(decodeURIComponent(grpcErr.details), message);
    const status = grpcStatusDetails(grpcErr);
    assert.deepEqual([status.code, status.message], [GrpcStatus.ALREADY_EXISTS, message]);
    assert.equal(status.details.length, 1);
    const [any] = status.details;
    assert.equal(any?.typeUrl, "type.googleapis.com/google.rpc.ErrorInfo");
    const grpcInfo = any === undefined ? undefined : anyUnpack(any, ErrorInfoSchema);
    assert.deepEqual(
      { reason: grpcInfo?.reason, domain: grpcInfo?.domain, metadata: grpcInfo?.metadata },
      alreadyCreatedInfo(id),
    );
    // Nothing was created by the replays: one token, the lost one.
    const tag = Buffer.from(user.userId.replace(/-/g, ""), "hex").toString("base64url");
    assert.deepEqual(await allKeys(h.service.redis, `{${tag}}t*`), [`{${tag}}t${id}`]);
  });

  it("the client recovers: the id from the 409 deletes the token and frees its name", async () => {
    const user = await h.user();
    // Distinct timestamps: equal messages would be replays of one another.
    const base = Date.now();
    const req = await signedCreate(user, { name: "stuck", timestamp: BigInt(base - 3) });
    assert.equal((await rest(h.service, "POST", req)).status, 201);
    // Before the fix a new request for the name was a 409 with nothing to act on.
    assert.equal(
      (
        await rest(
          h.service,
          "POST",
          await signedCreate(user, { name: "stuck", timestamp: BigInt(base - 2) }),
        )
      ).status,
      409,
    );
    const replay = await rest(h.service, "POST", req);
    const detail = replay.body.details?.[0];
    assert.ok(
      typeof detail === "object" && detail !== null && "metadata" in detail,
      `no ErrorInfo in ${replay.text}`,
    );
    const { tokenId } = detail.metadata as { tokenId: string };
    const deleted = await rest(h.service, "DELETE", await signedDelete(user, tokenId));
    assert.equal(deleted.status, 200);
    const fresh = await rest(
      h.service,
      "POST",
      await signedCreate(user, { name: "stuck", timestamp: BigInt(base - 1) }),
    );
    assert.equal(fresh.status, 201);
    // Its token gone, the old request is a plain replay.
    const stale = await rest(h.service, "POST", req);
    assert.deepEqual([stale.status, stale.body.message], [401, "Signature already used"]);
  });

  it("the id is derived from the signed message, so it is known without being stored", async () => {
    const user = await h.user();
    const req = await signedCreate(user);
    const created = await rest(h.service, "POST", req);
    const message = createTokenMessage({ ...req, expiresIn: undefined, name: undefined });
    const digest = createHash("sha256").update(message).digest();
    const expected = createHash("sha256")
      .update(Buffer.concat([Buffer.from("perps.token.v1 token id\0"), digest]))
      .digest()
      .subarray(0, 12)
      .toString("base64url");
    assert.equal(created.body.id, expected);
  });
});

describe("refused requests are remembered (finding 2)", () => {
  it("a request refused with 409, 404, 429 or for a deleted key cannot be replayed later", async () => {
    const h = await harness({ maxActive: 2 });
    try {
      const user = await h.user();
      const base = Date.now();
      const at = (i: number) => BigInt(base - i);
      const replayed = async (method: "POST" | "DELETE", req: Fields) => {
        const res = await rest(h.service, method, req);
        assert.deepEqual([res.status, res.body.message], [401, "Signature already used"]);
      };

      // 409: the name is taken; once it is free, the captured request must not create a token.
      const first = await rest(
        h.service,
        "POST",
        await signedCreate(user, { name: "busy", timestamp: at(1) }),
      );
      const taken = await signedCreate(user, { name: "busy", timestamp: at(2) });
      assert.equal((await rest(h.service, "POST", taken)).status, 409);

      // 404: a delete of a token that does not exist yet.
      const early = await signedDelete(user, "not-yet", { timestamp: at(3) });
      assert.equal((await rest(h.service, "DELETE", early)).status, 404);

      // 429: too many live tokens (2 allowed).
      const second = await rest(h.service, "POST", await signedCreate(user, { timestamp: at(4) }));
      assert.equal(second.status, 201);
      const full = await signedCreate(user, { timestamp: at(5) });
      assert.equal((await rest(h.service, "POST", full)).status, 429);

      // Free the name and both slots, then replay each refused request.
      for (const created of [first, second]) {
        const del = await signedDelete(user, created.body.id ?? "", {
          timestamp: at(6 + (created === first ? 0 : 1)),
        });
        assert.equal((await rest(h.service, "DELETE", del)).status, 200);
      }
      await replayed("POST", taken);
      await replayed("DELETE", early);
      await replayed("POST", full);
      // Re-signed with a new timestamp, the same create succeeds.
      const resigned = await signedCreate(user, { name: "busy", timestamp: at(8) });
      assert.equal((await rest(h.service, "POST", resigned)).status, 201);
    } finally {
      await h.close();
    }
  });

  it("a rate-limited request is remembered", async () => {
    const h = await harness({ ratePerMinute: 1 });
    try {
      const user = await h.user();
      await createdEarlier(h, user);
      const limited = await signedCreate(user);
      assert.equal((await rest(h.service, "POST", limited)).status, 429);
      // Not limited again: refused as used, before it could wait for the bucket.
      const again = await rest(h.service, "POST", limited);
      assert.deepEqual([again.status, again.body.message], [401, "Signature already used"]);
    } finally {
      await h.close();
    }
  });

  it("a request signed with a key deleted meanwhile stays used when the key is registered again", async () => {
    const h = await harness();
    try {
      const user = await h.user();
      // The service caches the key with this call.
      await createdEarlier(h, user);
      await h.keys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
      const captured = await signedCreate(user);
      const revoked = await rest(h.service, "POST", captured);
      assert.deepEqual([revoked.status, revoked.body.message], [401, "Invalid signature"]);
      await h.keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      const replay = await rest(h.service, "POST", captured);
      assert.deepEqual([replay.status, replay.body.message], [401, "Signature already used"]);
    } finally {
      await h.close();
    }
  });
});
