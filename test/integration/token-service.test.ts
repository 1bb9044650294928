import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { allKeys } from "../support/all-keys.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import {
  newUser,
  signedCreate,
  signedDelete,
  signText,
  type TestUser,
} from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

const DAY_MS = 86_400_000;

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** The hash tag content of a user's keys, worked out here rather than taken from the code under test. */
function userTagOf(userId: string): string {
  return Buffer.from(userId.replace(/-/g, ""), "hex").toString("base64url");
}

async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) {
      return err;
    }
    throw err;
  }
  assert.fail("expected the call to fail");
}

describe("TokenService and UserKeyService", () => {
  let redis: TestRedis;
  let service: TestService;
  let publicTokens: ReturnType<typeof createClient<typeof TokenService>>;
  let publicTokensH2: ReturnType<typeof createClient<typeof TokenService>>;
  let grpcTokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;
  let grpcKeys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;

  /** A user whose key is registered through the internal listener. */
  async function registeredUser(userId?: string): Promise<TestUser> {
    const user = await newUser(userId);
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      tokenMaxLifetimeSeconds: 31_536_000,
    });
    publicTokens = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
    );
    publicTokensH2 = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "2" }),
    );
    grpcTokens = createGrpcClient(TokenService, service.internalAddress);
    grpcKeys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  });

  after(async () => {
    grpcTokens.close();
    grpcKeys.close();
    await service.stop();
    await redis.dispose();
  });

  describe("create succeeds", () => {
    it("over gRPC on the internal listener, with the documented response", async () => {
      const user = await registeredUser();
      const before = Date.now();
      const res = await grpcTokens.createToken(await signedCreate(user));
      assert.equal(res.expiresAt, new Date(before + 7 * DAY_MS).toISOString().slice(0, 10));
      assert.match(res.id, /^[A-Za-z0-9_-]{16}$/);
      assert.ok(isWellFormedToken(res.token), res.token);
    });

    it("over Connect on the public listener, HTTP/1.1 and HTTP/2", async () => {
      const user = await registeredUser();
      for (const client of [publicTokens, publicTokensH2]) {
        const res = await client.createToken(
          await signedCreate(user, { expiresIn: 3600n, name: `bot ${randomUUID()}` }),
        );
        assert.ok(isWellFormedToken(res.token));
      }
    });

    it("over gRPC-Web", async () => {
      const user = await registeredUser();
      const client = createClient(
        TokenService,
        createGrpcWebTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
      );
      const res = await client.createToken(await signedCreate(user));
      assert.ok(isWellFormedToken(res.token));
    });

    it("expiresAt is the UTC date of server time + expiresIn", async () => {
      const user = await registeredUser();
      const before = Date.now();
      const res = await publicTokens.createToken(
        await signedCreate(user, { expiresIn: (400n * 86_400n) / 400n, name: "one day" }),
      );
      const after = Date.now();
      const allowed = [before, after].map((t) => new Date(t + DAY_MS).toISOString().slice(0, 10));
      assert.ok(allowed.includes(res.expiresAt), `${res.expiresAt} not in ${allowed}`);
    });

    it("stores only a digest of the token, in keys that share the user's hash tag", async () => {
      const user = await registeredUser();
      const res = await publicTokens.createToken(await signedCreate(user, { name: "stored" }));
      const tag = `{${userTagOf(user.userId)}}`;
      const keys = await allKeys(service.redis, `${tag}*`);
      assert.deepEqual(
        keys.sort(),
        [
          `${tag}a`,
          `${tag}i`,
          `${tag}k`,
          `${tag}l`,
          `${tag}n`,
          `${tag}p`,
          `${tag}r`,
          `${tag}t${res.id}`,
        ].sort(),
      );
      for (const key of keys) {
        assert.ok(!key.includes(res.token));
      }
      const tokenKey = `${tag}t${res.id}`;
      assert.equal(Buffer.byteLength(tokenKey), 41);
      const digest = sha256(res.token).subarray(0, 28);
      // Record layout 1: the 28-byte digest prefix, 0x01, the key's expiry (8 bytes), the name.
      const record = await service.redis.getBuffer(tokenKey);
      assert.deepEqual(
        record,
        Buffer.concat([digest, Buffer.of(1), await expiryBytes(tokenKey), Buffer.from("stored")]),
      );
      // The live count holds the token id's raw bytes, so a revocation finds the token.
      assert.deepEqual(await service.redis.zrangeBuffer(`${tag}l`, 0, -1), [
        Buffer.from(res.id, "base64url"),
      ]);
      assert.deepEqual(await service.redis.zrange(`${tag}n`, 0, -1), ["stored"]);
      // The name → id hash, for listing.
      assert.deepEqual(await service.redis.hgetall(`${tag}i`), { stored: res.id });
      const ttl = await service.redis.pttl(tokenKey);
      assert.ok(ttl > 7 * DAY_MS - 60_000 && ttl <= 7 * DAY_MS, String(ttl));
      // A delete finds the name and the live member in the binary record.
      await publicTokens.deleteToken(await signedDelete(user, res.id));
      assert.equal(await service.redis.exists(tokenKey, `${tag}n`, `${tag}l`, `${tag}i`), 0);
    });

    /** A key's expiry as Redis keeps it (Unix ms), as 8 bytes big-endian. */
    async function expiryBytes(key: string): Promise<Buffer> {
      const bytes = Buffer.alloc(8);
      bytes.writeBigUInt64BE(BigInt(await service.redis.pexpiretime(key)));
      return bytes;
    }

    it("a session token (no name) appears in no listing: only the live count knows its id", async () => {
      const user = await registeredUser();
      const res = await publicTokens.createToken(await signedCreate(user));
      const tag = `{${userTagOf(user.userId)}}`;
      assert.deepEqual(await service.redis.exists(`${tag}n`, `${tag}i`), 0);
      // Only the token's digest and expiry: no name, no id.
      const tokenKey = `${tag}t${res.id}`;
      const record = await service.redis.getBuffer(tokenKey);
      assert.deepEqual(
        record,
        Buffer.concat([
          sha256(res.token).subarray(0, 28),
          Buffer.of(1),
          await expiryBytes(tokenKey),
        ]),
      );
      // Its id (not a secret: a delete must be signed) is in the live count
      // only, which no API lists, so that an operator can revoke it.
      const live = await service.redis.zrangeBuffer(`${tag}l`, 0, -1);
      assert.deepEqual(live, [Buffer.from(res.id, "base64url")]);
    });
  });

  describe("rule 1: shape → INVALID_ARGUMENT naming the field", () => {
    const max = 2n ** 53n - 1n;
    const cases: { name: string; fields: Record<string, unknown>; message: RegExp }[] = [
      {
        name: "uppercase signature",
        fields: { signature: "A".repeat(128) },
        message: /^signature: /,
      },
      { name: "short signature", fields: { signature: "a".repeat(127) }, message: /^signature: / },
      { name: "long signature", fields: { signature: "a".repeat(130) }, message: /^signature: / },
      {
        name: "0x signature",
        fields: { signature: `0x${"a".repeat(126)}` },
        message: /^signature: /,
      },
      { name: "empty signature", fields: { signature: "" }, message: /^signature: is required/ },
      { name: "timestamp above 2^53-1", fields: { timestamp: max + 1n }, message: /^timestamp: / },
      {
        name: "timestamp below -(2^53-1)",
        fields: { timestamp: -max - 1n },
        message: /^timestamp: /,
      },
      { name: "userId not a UUID", fields: { userId: "user-1" }, message: /^userId: / },
      {
        name: "userId version 0",
        fields: { userId: "0b3c4d5e-1f2a-0b4c-8d9e-0123456789ab" },
        message: /^userId: /,
      },
      {
        name: "userId version 9",
        fields: { userId: "0b3c4d5e-1f2a-9b4c-8d9e-0123456789ab" },
        message: /^userId: /,
      },
      {
        name: "userId variant c",
        fields: { userId: "0b3c4d5e-1f2a-4b4c-cd9e-0123456789ab" },
        message: /^userId: /,
      },
      {
        name: "userId variant 7",
        fields: { userId: "0b3c4d5e-1f2a-4b4c-7d9e-0123456789ab" },
        message: /^userId: /,
      },
      {
        name: "userId without dashes",
        fields: { userId: "0b3c4d5e1f2a4b4c8d9e0123456789ab" },
        message: /^userId: /,
      },
      {
        name: "expiresIn 0",
        fields: { expiresIn: 0n },
        message: /^expiresIn: must be greater than 0$/,
      },
      {
        name: "expiresIn negative",
        fields: { expiresIn: -5n },
        message: /^expiresIn: must be greater than 0$/,
      },
      {
        name: "expiresIn above 2^53-1",
        fields: { expiresIn: max + 1n },
        message: /^expiresIn: must be an integer/,
      },
      {
        name: "expiresIn above the maximum lifetime",
        fields: { expiresIn: 31_536_001n, name: "x" },
        message: /^expiresIn: must be at most 31536000/,
      },
      {
        name: "expiresIn > 7 days without name",
        fields: { expiresIn: 604_801n },
        message: /^name: is required when expiresIn is greater than 604800$/,
      },
      { name: "empty name", fields: { name: "" }, message: /^name: must be 1 to 128 characters$/ },
      {
        name: "name of 129 characters",
        fields: { name: "n".repeat(129) },
        message: /^name: must be 1 to 128/,
      },
      {
        name: "name with a control character",
        fields: { name: "a\u0007b" },
        message: /^name: must not contain control/,
      },
      {
        name: "name with a newline",
        fields: { name: "a\nb" },
        message: /^name: must not contain control/,
      },
    ];
    for (const c of cases) {
      it(`refuses ${c.name}`, async () => {
        const user = await newUser();
        const req = { ...(await signedCreate(user)), ...c.fields };
        const err = await connectError(publicTokens.createToken(req));
        assert.equal(err.code, Code.InvalidArgument);
        assert.match(err.rawMessage, c.message);
      });
    }

    it("accepts a name of 128 characters (emoji count as one)", async () => {
      const user = await registeredUser();
      const name = "🚀".repeat(128);
      const res = await publicTokens.createToken(await signedCreate(user, { name }));
      assert.ok(isWellFormedToken(res.token));
    });

    it("accepts expiresIn above 7 days with a name, up to the maximum lifetime", async () => {
      const user = await registeredUser();
      const res = await publicTokens.createToken(
        await signedCreate(user, { expiresIn: 31_536_000n, name: "year" }),
      );
      assert.equal(res.expiresAt.length, 10);
    });

    it("names every wrong field at once", async () => {
      const err = await connectError(
        publicTokens.createToken({ signature: "x", timestamp: 1n, userId: "u" }),
      );
      assert.equal(err.code, Code.InvalidArgument);
      assert.match(err.rawMessage, /signature: .*; userId: /);
    });

    for (const [name, fields, message] of [
      ["empty tokenId", { tokenId: "" }, /^tokenId: is required$/],
      ["tokenId of 129 characters", { tokenId: "t".repeat(129) }, /^tokenId: must be at most 128/],
      ["bad signature", { signature: "0".repeat(127) }, /^signature: /],
      ["bad userId", { userId: "nope" }, /^userId: /],
    ] as const) {
      it(`delete refuses ${name}`, async () => {
        const user = await newUser();
        const req = { ...(await signedDelete(user, "abc")), ...fields };
        const err = await connectError(publicTokens.deleteToken(req));
        assert.equal(err.code, Code.InvalidArgument);
        assert.match(err.rawMessage, message);
      });
    }

    it("shape is checked before the time window", async () => {
      const user = await newUser();
      const req = await signedCreate(user, { timestamp: 1n, expiresIn: 0n });
      const err = await connectError(publicTokens.createToken(req));
      assert.equal(err.code, Code.InvalidArgument);
    });
  });

  describe("userId forms", () => {
    for (const userId of [
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
      "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
      "0B3C4D5E-1F2A-4B4C-AD9E-0123456789AB",
      "0b3c4d5e-1f2a-1b4c-bd9e-0123456789ab",
      "0b3c4d5e-1f2a-8b4c-9d9e-0123456789ab",
    ]) {
      it(`accepts ${userId}`, async () => {
        const user = await registeredUser(userId);
        const res = await publicTokens.createToken(
          await signedCreate(user, { name: randomUUID() }),
        );
        assert.ok(isWellFormedToken(res.token));
      });
    }

    it("identity is case-insensitive while the signature covers the userId verbatim", async () => {
      const lower = randomUUID();
      const upper = lower.toUpperCase();
      const user = await registeredUser(upper);
      const created = await publicTokens.createToken(
        await signedCreate(user, { userId: upper, name: "case" }),
      );
      // Same user, other spelling: the name is taken, and the token can be deleted.
      const dup = await connectError(
        publicTokens.createToken(await signedCreate(user, { userId: lower, name: "case" })),
      );
      assert.equal(dup.code, Code.AlreadyExists);
      await publicTokens.deleteToken(await signedDelete(user, created.id, { userId: lower }));
      // A signature over the lowercase form does not verify a request that sends uppercase.
      const req = await signedCreate(user, { userId: lower });
      const err = await connectError(publicTokens.createToken({ ...req, userId: upper }));
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(err.rawMessage, "Invalid signature");
    });
  });

  describe("rule 2: time window → UNAUTHENTICATED Signature expired", () => {
    for (const offset of [-121_000, 121_000, -3_600_000, 10 * 365 * 86_400_000]) {
      it(`refuses a timestamp ${offset} ms from server time (create and delete)`, async () => {
        const user = await registeredUser();
        const timestamp = BigInt(Date.now() + offset);
        const create = await connectError(
          publicTokens.createToken(await signedCreate(user, { timestamp })),
        );
        assert.equal(create.code, Code.Unauthenticated);
        assert.equal(create.rawMessage, "Signature expired");
        const del = await connectError(
          publicTokens.deleteToken(await signedDelete(user, "x", { timestamp })),
        );
        assert.equal(del.code, Code.Unauthenticated);
        assert.equal(del.rawMessage, "Signature expired");
      });
    }

    for (const offset of [-115_000, 115_000]) {
      it(`accepts a timestamp ${offset} ms from server time`, async () => {
        const user = await registeredUser();
        const res = await publicTokens.createToken(
          await signedCreate(user, { timestamp: BigInt(Date.now() + offset) }),
        );
        assert.ok(isWellFormedToken(res.token));
      });
    }

    it("checks the window before the signature", async () => {
      const user = await newUser();
      const req = await signedCreate(user, { timestamp: BigInt(Date.now() - 200_000) });
      const err = await connectError(publicTokens.createToken(req));
      assert.equal(err.rawMessage, "Signature expired");
    });
  });

  describe("rule 3: signature → UNAUTHENTICATED Invalid signature", () => {
    async function expectInvalid(promise: Promise<unknown>) {
      const err = await connectError(promise);
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(err.rawMessage, "Invalid signature");
    }

    it("omitted fields leave empty slots in the signed message", async () => {
      const user = await registeredUser();
      const t = Date.now();
      const cases = [
        { msg: `createToken:${t}:::${user.userId}`, req: {} },
        { msg: `createToken:${t}:60::${user.userId}`, req: { expiresIn: 60n } },
        { msg: `createToken:${t}::slot:${user.userId}`, req: { name: "slot" } },
        { msg: `createToken:${t}:61:both:${user.userId}`, req: { expiresIn: 61n, name: "both" } },
      ];
      for (const c of cases) {
        const signature = await signText(user.secretKey, c.msg);
        const res = await publicTokens.createToken({
          signature,
          timestamp: BigInt(t),
          userId: user.userId,
          ...c.req,
        });
        assert.ok(isWellFormedToken(res.token), c.msg);
      }
    });

    it("refuses a message with the default filled into the omitted expiresIn slot", async () => {
      const user = await registeredUser();
      const t = Date.now();
      const signature = await signText(user.secretKey, `createToken:${t}:604800::${user.userId}`);
      await expectInvalid(
        publicTokens.createToken({ signature, timestamp: BigInt(t), userId: user.userId }),
      );
    });

    it("refuses fields in another order", async () => {
      const user = await registeredUser();
      const t = Date.now();
      const signature = await signText(user.secretKey, `createToken:${user.userId}:${t}:60:n`);
      await expectInvalid(
        publicTokens.createToken({
          signature,
          timestamp: BigInt(t),
          userId: user.userId,
          expiresIn: 60n,
          name: "n",
        }),
      );
    });

    it("refuses a signature by another user's key", async () => {
      const alice = await registeredUser();
      const mallory = await registeredUser();
      const req = await signedCreate(mallory, { userId: alice.userId });
      await expectInvalid(publicTokens.createToken(req));
    });

    it("gives the same answer for an unknown user", async () => {
      const stranger = await newUser();
      await expectInvalid(publicTokens.createToken(await signedCreate(stranger)));
      await expectInvalid(publicTokens.deleteToken(await signedDelete(stranger, "t")));
    });

    it("refuses a tampered field", async () => {
      const user = await registeredUser();
      const req = await signedCreate(user, { expiresIn: 60n });
      await expectInvalid(publicTokens.createToken({ ...req, expiresIn: 61n }));
    });

    it("refuses a create signature used for delete", async () => {
      const user = await registeredUser();
      const t = BigInt(Date.now());
      const create = await signedCreate(user, { timestamp: t });
      await expectInvalid(
        publicTokens.deleteToken({
          signature: create.signature,
          timestamp: t,
          tokenId: "x",
          userId: user.userId,
        }),
      );
    });

    it("accepts any of the user's keys, and refuses a key once deleted", async () => {
      const user = await registeredUser();
      const second = await newUser(user.userId);
      await grpcKeys.putUserKey({ userId: user.userId, publicKey: second.publicKey });
      await publicTokens.createToken(await signedCreate(user));
      await publicTokens.createToken(await signedCreate(second));
      await grpcKeys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
      await expectInvalid(publicTokens.createToken(await signedCreate(user)));
      await publicTokens.createToken(await signedCreate(second));
    });
  });

  describe("rule 4: business rules", () => {
    it("a name held by a live token → ALREADY_EXISTS; free again once deleted", async () => {
      const user = await registeredUser();
      const first = await publicTokens.createToken(await signedCreate(user, { name: "bot" }));
      const err = await connectError(
        publicTokens.createToken(await signedCreate(user, { name: "bot" })),
      );
      assert.equal(err.code, Code.AlreadyExists);
      assert.match(err.rawMessage, /^name: /);
      // Names are per user.
      const other = await registeredUser();
      await publicTokens.createToken(await signedCreate(other, { name: "bot" }));
      const del = await publicTokens.deleteToken(await signedDelete(user, first.id));
      assert.deepEqual(Object.keys(del), ["$typeName"]);
      await publicTokens.createToken(await signedCreate(user, { name: "bot" }));
    });

    it("the expiry of a 1-second token frees its name", async () => {
      const user = await registeredUser();
      const first = await publicTokens.createToken(
        await signedCreate(user, { name: "short", expiresIn: 1n }),
      );
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal(await service.redis.exists(`{${userTagOf(user.userId)}}t${first.id}`), 0);
      await publicTokens.createToken(await signedCreate(user, { name: "short" }));
      const err = await connectError(publicTokens.deleteToken(await signedDelete(user, first.id)));
      assert.equal(err.code, Code.NotFound);
    });

    it("deleting an unknown, already deleted, or another user's token → NOT_FOUND", async () => {
      const alice = await registeredUser();
      const bob = await registeredUser();
      const token = await publicTokens.createToken(await signedCreate(alice, { name: "keep" }));
      const unknown = await connectError(
        publicTokens.deleteToken(await signedDelete(alice, "nope")),
      );
      assert.equal(unknown.code, Code.NotFound);
      const foreign = await connectError(
        publicTokens.deleteToken(await signedDelete(bob, token.id)),
      );
      assert.equal(foreign.code, Code.NotFound);
      // The token survived bob's attempt: alice can still delete it, once.
      await grpcTokens.deleteToken(await signedDelete(alice, token.id));
      const again = await connectError(
        publicTokens.deleteToken(await signedDelete(alice, token.id)),
      );
      assert.equal(again.code, Code.NotFound);
    });

    it("30 simultaneous creates of one name by one user: exactly one succeeds", async () => {
      const user = await registeredUser();
      const now = Date.now();
      const requests = await Promise.all(
        // Distinct timestamps: identical messages would be refused as replays.
        Array.from({ length: 30 }, (_, i) =>
          signedCreate(user, { name: "race", timestamp: BigInt(now - i) }),
        ),
      );
      const results = await Promise.allSettled(
        requests.map((req, i) =>
          i % 2 === 0 ? publicTokens.createToken(req) : grpcTokens.createToken(req),
        ),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) {
        if (r.status === "rejected") {
          const code = r.reason instanceof ConnectError ? r.reason.code : undefined;
          assert.ok(
            code === Code.AlreadyExists || isGrpcError(r.reason, GrpcStatus.ALREADY_EXISTS),
            String(r.reason),
          );
        }
      }
    });
  });

  describe("UserKeyService", () => {
    it("is idempotent and allows at most 5 keys per user", async () => {
      const user = await registeredUser();
      await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      for (let i = 0; i < 4; i++) {
        const extra = await newUser(user.userId);
        await grpcKeys.putUserKey({ userId: user.userId, publicKey: extra.publicKey });
      }
      const sixth = await newUser(user.userId);
      await assert.rejects(
        grpcKeys.putUserKey({ userId: user.userId, publicKey: sixth.publicKey }),
        (err) => isGrpcError(err, GrpcStatus.FAILED_PRECONDITION),
      );
      await grpcKeys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
      await grpcKeys.putUserKey({ userId: user.userId, publicKey: sixth.publicKey });
      // Deleting a key that is not there is fine (idempotent).
      await grpcKeys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
    });

    for (const [name, publicKey] of [
      ["the identity (small order)", `01${"00".repeat(31)}`],
      ["a point of order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"],
      ["a non-canonical encoding", `ed${"ff".repeat(30)}7f`],
      ["uppercase hex", "AB".repeat(32)],
      ["a short key", "ab".repeat(31)],
    ]) {
      it(`refuses ${name} with INVALID_ARGUMENT`, async () => {
        await assert.rejects(grpcKeys.putUserKey({ userId: randomUUID(), publicKey }), (err) =>
          isGrpcError(err, GrpcStatus.INVALID_ARGUMENT),
        );
      });
    }

    it("the identity-key forgery cannot be used: the key is never registered", async () => {
      const userId = randomUUID();
      const identity = `01${"00".repeat(31)}`;
      await assert.rejects(grpcKeys.putUserKey({ userId, publicKey: identity }));
      const forged = `${identity}${"00".repeat(32)}`;
      const err = await connectError(
        publicTokens.createToken({ signature: forged, timestamp: BigInt(Date.now()), userId }),
      );
      assert.equal(err.rawMessage, "Invalid signature");
    });

    it("refuses a bad userId", async () => {
      const user = await newUser();
      await assert.rejects(grpcKeys.putUserKey({ userId: "x", publicKey: user.publicKey }), (err) =>
        isGrpcError(err, GrpcStatus.INVALID_ARGUMENT),
      );
    });

    it("is not served on the public listener", async () => {
      const res = await fetch(`${service.publicUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(res.status, 404);
      const grpcPublicKeys = createOperatorGrpcClient(UserKeyService, service.publicAddress);
      try {
        const user = await newUser();
        await assert.rejects(
          grpcPublicKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey }),
          (err) => isGrpcError(err, GrpcStatus.UNIMPLEMENTED),
        );
      } finally {
        grpcPublicKeys.close();
      }
    });
  });

  describe("logs", () => {
    it("write one JSON line per request and never a token or signature", async () => {
      const user = await registeredUser();
      const req = await signedCreate(user, { name: "logged" });
      const before = service.logs.length;
      const res = await publicTokens.createToken(req);
      const lines = service.logs.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(
        lines.some(
          (l) => l.method === "perps.token.v1.TokenService/CreateToken" && l.code === "ok",
        ),
      );
      const all = service.logs.join("\n");
      assert.ok(!all.includes(res.token));
      assert.ok(!all.includes(req.signature));
    });
  });
});
