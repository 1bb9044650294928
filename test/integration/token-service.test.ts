import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { TokenRecordSchema } from "../../src/gen/perps/tokenstore/v1/token_record_pb.js";
import { TOKEN_RECORD_LAYOUT } from "../../src/store/token-record.js";
import { allKeys } from "../support/all-keys.js";
import { connectError } from "../support/connect-error.js";
import { isGrpcError } from "../support/grpc-client.js";
import { signedCreate, signedDelete } from "../support/signing.js";
import { tokenServiceSuite } from "../support/token-service-suite.js";

const DAY_MS = 86_400_000;

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** The hash tag content of a user's keys, worked out here rather than taken from the code under test. */
function userTagOf(userId: string): string {
  return Buffer.from(userId.replace(/-/g, ""), "hex").toString("base64url");
}

describe("TokenService and UserKeyService", () => {
  const { service, publicTokens, publicTokensH2, grpcTokens, registeredUser } = tokenServiceSuite();

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
      // Record layout 2: the 28-byte digest prefix, 0x02, then TokenRecord (the key's expiry, the name).
      const record = await service.redis.getBuffer(tokenKey);
      assert.deepEqual(
        record,
        Buffer.concat([digest, Buffer.of(2), await storedFields(tokenKey, "stored")]),
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

    /** TokenRecord's encoding of a key's expiry as Redis keeps it (Unix ms) and a name. */
    /** TokenRecord as a create stores it: the key's expiry, the name, and the instant of the create. */
    async function storedFields(key: string, name: string): Promise<Uint8Array> {
      const expiresAtMs = BigInt(await service.redis.pexpiretime(key));
      const record = await service.redis.getBuffer(key);
      const { createdAtMs } = fromBinary(
        TokenRecordSchema,
        (record ?? Buffer.of()).subarray(TOKEN_RECORD_LAYOUT.headBytes),
      );
      assert.ok(Math.abs(Number(createdAtMs) - Date.now()) < 60_000, String(createdAtMs));
      return toBinary(
        TokenRecordSchema,
        create(TokenRecordSchema, { expiresAtMs, name, createdAtMs }),
      );
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
          Buffer.of(2),
          await storedFields(tokenKey, ""),
        ]),
      );
      // Its id (not a secret: a delete must be signed) is in the live count
      // only, which no API lists, so that an operator can revoke it.
      const live = await service.redis.zrangeBuffer(`${tag}l`, 0, -1);
      assert.deepEqual(live, [Buffer.from(res.id, "base64url")]);
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
