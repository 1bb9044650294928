import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenService } from "../../src/gen/perps/token/v1/token_pb.js";
import { UserKeyService } from "../../src/gen/perps/token/v1/user_key_pb.js";
import { createTokenMessage } from "../../src/token/signed-message.js";
import { allKeys } from "../support/all-keys.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import {
  newUser,
  signBytes,
  signedCreate,
  signedDelete,
  type TestUser,
} from "../support/signing.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

type Fields = Record<string, string | bigint | undefined>;

/** The REST JSON of a signed request (bigints as JSON numbers). */
function json(fields: Fields): string {
  return JSON.stringify(fields, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
}

async function rest(service: TestService, method: "POST" | "DELETE", fields: Fields) {
  const res = await fetch(`${service.publicUrl}/user/tokens`, {
    method,
    headers: { "content-type": "application/json" },
    body: json(fields),
  });
  const body = (await res.json()) as {
    code?: number;
    message?: string;
    id?: string;
    token?: string;
  };
  return { status: res.status, body, retryAfter: res.headers.get("retry-after") };
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
  const keys = createGrpcClient(UserKeyService, service.internalAddress);
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
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it("refuses an accepted create sent again, over REST and gRPC", async () => {
    const user = await h.user();
    const req = await signedCreate(user, { name: "once" });
    assert.equal((await rest(h.service, "POST", req)).status, 201);
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

  it("lets a request that failed (409, 404) be retried", async () => {
    const user = await h.user();
    const first = await rest(h.service, "POST", await signedCreate(user, { name: "busy" }));
    const second = await signedCreate(user, {
      name: "busy",
      timestamp: BigInt(Date.now() - 1000),
    });
    assert.equal((await rest(h.service, "POST", second)).status, 409);
    const missing = await signedDelete(user, "not-yet");
    assert.equal((await rest(h.service, "DELETE", missing)).status, 404);
    assert.equal((await rest(h.service, "DELETE", missing)).status, 404);
    await rest(h.service, "DELETE", await signedDelete(user, first.body.id ?? ""));
    // The very same signed request, retried after the name was freed.
    assert.equal((await rest(h.service, "POST", second)).status, 201);
  });

  it("lets exactly one of 20 concurrent copies through", async () => {
    const user = await h.user();
    const req = await signedCreate(user);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => rest(h.service, "POST", req)),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    for (const r of results.filter((x) => x.status !== 201)) {
      assert.equal(r.body.message, "Signature already used");
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
    assert.equal(again.body.message, "Signature already used");
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
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

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
