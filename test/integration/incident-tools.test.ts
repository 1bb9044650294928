import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { createGrpcClient } from "../support/grpc-client.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { operatorConnectInterceptor, TEST_OPERATOR } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 22 item 6: an operator's incident tools on the internal listener
// (ListUserKeys, RevokeUserTokens), their audit lines, and what removing a
// key does to the user's live tokens. Runs against one redis-server and,
// under `npm run test:cluster`, against a Redis Cluster.

/** The fingerprint as documented: SHA256: and the unpadded base64 SHA-256 of the raw key. */
const fingerprintOf = (publicKey: string) =>
  `SHA256:${createHash("sha256").update(Buffer.from(publicKey, "hex")).digest("base64").replace(/=+$/, "")}`;

interface AuditLine {
  level: number;
  msg: string;
  audit: string;
  userId: string;
  requestId: string;
  [field: string]: unknown;
}

describe("incident tools", () => {
  let redis: TestRedis;
  let service: TestService;
  let keys: ReturnType<typeof createClient<typeof UserKeyService>>;
  let admin: ReturnType<typeof createClient<typeof TokenAdminService>>;
  let introspection: ReturnType<typeof createClient<typeof TokenIntrospectionService>>;
  let tokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
    const transport = createConnectTransport({
      baseUrl: service.internalUrl,
      httpVersion: "1.1",
      interceptors: [operatorConnectInterceptor()],
    });
    keys = createClient(UserKeyService, transport);
    admin = createClient(TokenAdminService, transport);
    introspection = createClient(TokenIntrospectionService, transport);
    tokens = createGrpcClient(TokenService, service.internalAddress);
  });

  after(async () => {
    tokens.close();
    await service.stop();
    await redis.dispose();
  });

  async function registered(user: TestUser): Promise<TestUser> {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  /** A token of the user: named, or a session token (a distinct expiresIn keeps messages apart). */
  async function created(user: TestUser, name: string | undefined, expiresIn: bigint) {
    const res = await tokens.createToken(
      await signedCreate(user, { expiresIn, ...(name === undefined ? {} : { name }) }),
    );
    return res.token;
  }

  async function isLive(token: string): Promise<boolean> {
    return (await introspection.introspectToken({ token })).active;
  }

  /** The audit lines the service wrote for `userId` (lowercase). */
  function auditLines(userId: string): AuditLine[] {
    // The logger writes lines in batches: a chunk may hold several.
    return service.logs
      .flatMap((chunk) => chunk.split("\n"))
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as AuditLine)
      .filter((line) => line.msg === "audit" && line.userId === userId);
  }

  describe("ListUserKeys", () => {
    it("lists each key with its fingerprint and the time it was added, oldest first", async () => {
      const first = await newUser();
      const second = await newUser(first.userId);
      const start = Date.now();
      await registered(first);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await registered(second);
      const end = Date.now();
      // Registering a key again keeps its first date.
      await registered(first);

      const { keys: listed } = await keys.listUserKeys({ userId: first.userId.toUpperCase() });
      assert.deepEqual(
        listed.map((key) => [key.publicKey, key.fingerprint]),
        [
          [first.publicKey, fingerprintOf(first.publicKey)],
          [second.publicKey, fingerprintOf(second.publicKey)],
        ],
      );
      for (const key of listed) {
        assert.match(key.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
        const added = Number(key.addedAtMs);
        // Redis' clock and ours are the same machine's; allow a little slack.
        assert.ok(added >= start - 1000 && added <= end + 1000, String(added));
      }
      assert.ok(Number(listed[0]?.addedAtMs) <= Number(listed[1]?.addedAtMs));

      const [line] = auditLines(first.userId).filter((l) => l.audit === "ListUserKeys");
      assert.ok(line !== undefined);
      assert.equal(line.level, 30);
      assert.equal(line.keys, 2);
      assert.match(line.requestId, /\S/);
      assert.equal(line.operator, TEST_OPERATOR.name, "the operator who asked");
    });

    it("lists nothing for a user without keys, and a key without a recorded date as 0", async () => {
      assert.deepEqual((await keys.listUserKeys({ userId: randomUUID() })).keys, []);
      const user = await registered(await newUser());
      // As a key registered before dates were recorded.
      await service.redis.hdel(redisKeysOf(user.userId).publicKeysAdded, user.publicKey);
      const { keys: listed } = await keys.listUserKeys({ userId: user.userId });
      assert.equal(listed.length, 1);
      assert.equal(listed[0]?.addedAtMs, 0n);
      assert.equal(listed[0]?.fingerprint, fingerprintOf(user.publicKey));
    });

    it("refuses a malformed user id, naming the field", async () => {
      await assert.rejects(
        keys.listUserKeys({ userId: "not-a-uuid" }),
        (err) =>
          err instanceof ConnectError &&
          err.code === Code.InvalidArgument &&
          /userId/.test(err.rawMessage),
      );
    });
  });

  describe("RevokeUserTokens", () => {
    it("revokes every live token of the user, named and session, and answers how many", async () => {
      const user = await registered(await newUser());
      const other = await registered(await newUser());
      const live = [
        await created(user, "bot-1", 3600n),
        await created(user, "bot-2", 3601n),
        await created(user, undefined, 3602n),
        await created(user, undefined, 3603n),
        await created(user, "bot-3", 3604n),
      ];
      const bystander = await created(other, "bystander", 3600n);

      const res = await admin.revokeUserTokens({ userId: user.userId.toUpperCase() });
      assert.equal(res.revokedTokens, 5);
      for (const token of live) {
        assert.equal(await isLive(token), false);
      }
      assert.equal(await isLive(bystander), true);
      // Nothing is left to count or name them: the cap and the names are free again.
      const redisKeys = redisKeysOf(user.userId);
      assert.equal(
        await service.redis.exists(redisKeys.live, redisKeys.names, redisKeys.nameIds),
        0,
      );
      const again = await created(user, "bot-1", 3600n);
      assert.equal(await isLive(again), true);
      // The keys stay registered: the operator removes them separately.
      assert.equal((await keys.listUserKeys({ userId: user.userId })).keys.length, 1);

      const lines = auditLines(user.userId).filter((l) => l.audit === "RevokeUserTokens");
      assert.equal(lines.length, 1);
      assert.equal(lines[0]?.level, 30);
      assert.equal(lines[0]?.revokedTokens, 5);
      assert.equal(lines[0]?.operator, TEST_OPERATOR.name);
    });

    it("is idempotent: a second call revokes nothing more", async () => {
      const user = await registered(await newUser());
      await created(user, undefined, 3600n);
      assert.equal((await admin.revokeUserTokens({ userId: user.userId })).revokedTokens, 1);
      assert.equal((await admin.revokeUserTokens({ userId: user.userId })).revokedTokens, 0);
      assert.equal((await admin.revokeUserTokens({ userId: randomUUID() })).revokedTokens, 0);
    });

    it("does not count a token that already expired", async () => {
      const user = await registered(await newUser());
      await created(user, undefined, 1n);
      const kept = await created(user, "kept", 3600n);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal((await admin.revokeUserTokens({ userId: user.userId })).revokedTokens, 1);
      assert.equal(await isLive(kept), false);
    });

    it("is atomic with concurrent creates: every token is either revoked or counted", async () => {
      const user = await registered(await newUser());
      const creates = Array.from({ length: 40 }, (_, i) =>
        created(user, i % 2 === 0 ? `bot-${i}` : undefined, BigInt(3600 + i)),
      );
      const revoked = admin.revokeUserTokens({ userId: user.userId });
      const made = await Promise.all(creates);
      const { revokedTokens } = await revoked;
      const alive = [];
      for (const token of made) {
        if (await isLive(token)) {
          alive.push(token);
        }
      }
      assert.equal(alive.length + revokedTokens, made.length);
      // The live count matches the tokens that survived: no token escaped its index.
      assert.equal(await service.redis.zcard(redisKeysOf(user.userId).live), alive.length);
      assert.equal(
        (await admin.revokeUserTokens({ userId: user.userId })).revokedTokens,
        alive.length,
      );
    });
  });

  describe("DeleteUserKey", () => {
    it("revokes every live token of the user when it removes a registered key", async () => {
      const leaked = await registered(await newUser());
      const kept = await registered(await newUser(leaked.userId));
      const byLeaked = [
        await created(leaked, "made-by-leaked", 3600n),
        await created(leaked, undefined, 3601n),
      ];
      const byKept = await created(kept, "made-by-kept", 3602n);

      const res = await keys.deleteUserKey({ userId: leaked.userId, publicKey: leaked.publicKey });
      assert.equal(res.revokedTokens, 3);
      for (const token of [...byLeaked, byKept]) {
        assert.equal(await isLive(token), false);
      }
      // The other key still works, and what it creates from now on lives.
      const after = await created(kept, "made-by-kept", 3600n);
      assert.equal(await isLive(after), true);
      assert.deepEqual(
        (await keys.listUserKeys({ userId: leaked.userId })).keys.map((k) => k.publicKey),
        [kept.publicKey],
      );

      // Removing a key that is not registered changes nothing: it revokes nothing.
      const again = await keys.deleteUserKey({
        userId: leaked.userId,
        publicKey: leaked.publicKey,
      });
      assert.equal(again.revokedTokens, 0);
      assert.equal(await isLive(after), true);

      const lines = auditLines(leaked.userId).filter((l) => l.audit === "DeleteUserKey");
      assert.deepEqual(
        lines.map((l) => [l.fingerprint, l.removed, l.revokedTokens]),
        [
          [fingerprintOf(leaked.publicKey), true, 3],
          [fingerprintOf(leaked.publicKey), false, 0],
        ],
      );
    });

    it("a create signed with a removed key is refused, and revives nothing", async () => {
      const user = await registered(await newUser());
      const request = await signedCreate(user, { name: "late", expiresIn: 3600n });
      await keys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
      await assert.rejects(tokens.createToken(request));
      assert.equal((await admin.revokeUserTokens({ userId: user.userId })).revokedTokens, 0);
    });
  });

  it("are served on the internal listener only", async () => {
    const publicTransport = createConnectTransport({
      baseUrl: service.publicUrl,
      httpVersion: "1.1",
    });
    const userId = randomUUID();
    for (const call of [
      () => createClient(TokenAdminService, publicTransport).revokeUserTokens({ userId }),
      () => createClient(UserKeyService, publicTransport).listUserKeys({ userId }),
      () =>
        createClient(UserKeyService, publicTransport).deleteUserKey({
          userId,
          publicKey: "0".repeat(64),
        }),
    ]) {
      await assert.rejects(
        call(),
        (err) => err instanceof ConnectError && err.code === Code.Unimplemented,
      );
    }
  });
});
