import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext } from "@connectrpc/connect";
import {
  DeleteUserKeyRequestSchema,
  ListUserKeysRequestSchema,
  PutUserKeyRequestSchema,
  UserKeyService,
} from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { keyFingerprint } from "../../../src/crypto/ed25519-verifier.js";
import type { AuditEvent } from "../../../src/log/audit-event.js";
import type { PublicKeyStore, RegisteredKey } from "../../../src/store/public-key-store.js";
import { createUserKeyService } from "../../../src/user-key/user-key-service.js";

// The service's own decisions, over a store kept in memory: what Redis does
// with the keys is test/integration/user-key-service.test.ts's.

/** A store of `maxKeysPerUser` keys a user, remembering what it was asked. */
function memoryStore(maxKeysPerUser: number, added: Map<string, RegisteredKey[]> = new Map()) {
  const asked: string[] = [];
  const store: PublicKeyStore = {
    maxKeysPerUser,
    async put(userId, publicKey) {
      asked.push(`put ${userId}`);
      const keys = added.get(userId) ?? [];
      if (keys.some((k) => k.publicKey === publicKey)) {
        return "stored";
      }
      if (keys.length >= maxKeysPerUser) {
        return "limit";
      }
      added.set(userId, [...keys, { publicKey, addedAtMs: 1000 + keys.length }]);
      return "stored";
    },
    async delete(userId, publicKey) {
      asked.push(`delete ${userId}`);
      const keys = added.get(userId) ?? [];
      const left = keys.filter((k) => k.publicKey !== publicKey);
      added.set(userId, left);
      return left.length < keys.length
        ? { removed: true, revokedTokens: 3 }
        : { removed: false, revokedTokens: 0 };
    },
    async list(userId) {
      asked.push(`list ${userId}`);
      return [...(added.get(userId) ?? [])];
    },
  };
  return { store, asked };
}

function publicKeyHex(): string {
  const der = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" });
  return der.subarray(der.length - 32).toString("hex");
}

function context(method: "putUserKey" | "deleteUserKey" | "listUserKeys") {
  return createHandlerContext({
    service: UserKeyService,
    method: UserKeyService.method[method],
    protocolName: "connect",
    requestMethod: "POST",
    url: `http://localhost/perps.token.v1.UserKeyService/${method}`,
  });
}

describe("createUserKeyService", () => {
  it("registers a key under the lowercase user id, and says so in the audit line", async () => {
    const { store, asked } = memoryStore(5);
    const events: AuditEvent[] = [];
    const service = createUserKeyService({ store, audit: (event) => events.push(event) });
    const key = publicKeyHex();
    await service.putUserKey(
      create(PutUserKeyRequestSchema, { userId: "Alice", publicKey: key }),
      context("putUserKey"),
    );
    assert.deepEqual(asked, ["put alice"]);
    assert.deepEqual(events, [
      { audit: "PutUserKey", userId: "alice", fingerprint: keyFingerprint(key), stored: true },
    ]);
  });

  it("refuses a key that cannot sign safely before the store is asked: INVALID_ARGUMENT", async () => {
    const { store, asked } = memoryStore(5);
    const service = createUserKeyService({ store });
    await assert.rejects(
      async () =>
        service.putUserKey(
          create(PutUserKeyRequestSchema, { userId: "alice", publicKey: `01${"00".repeat(31)}` }),
          context("putUserKey"),
        ),
      (err: unknown) =>
        err instanceof ConnectError &&
        err.code === Code.InvalidArgument &&
        err.rawMessage === "publicKey: is a small-order point, which cannot be used safely",
    );
    assert.deepEqual(asked, []);
  });

  it("a user with the most keys: FAILED_PRECONDITION naming the limit, audited as not stored", async () => {
    const { store } = memoryStore(1);
    const events: AuditEvent[] = [];
    const service = createUserKeyService({ store, audit: (event) => events.push(event) });
    const put = async (publicKey: string) =>
      service.putUserKey(
        create(PutUserKeyRequestSchema, { userId: "bob", publicKey }),
        context("putUserKey"),
      );
    await put(publicKeyHex());
    await assert.rejects(
      async () => put(publicKeyHex()),
      (err: unknown) =>
        err instanceof ConnectError &&
        err.code === Code.FailedPrecondition &&
        err.rawMessage ===
          "publicKey: the user already has 1 keys; delete one before adding another",
    );
    assert.deepEqual(
      events.map((e) => e.audit === "PutUserKey" && e.stored),
      [true, false],
    );
  });

  it("removing a key answers how many tokens went with it, and is audited either way", async () => {
    const key = publicKeyHex();
    const { store } = memoryStore(5, new Map([["carol", [{ publicKey: key, addedAtMs: 1 }]]]));
    const events: AuditEvent[] = [];
    const service = createUserKeyService({ store, audit: (event) => events.push(event) });
    const remove = () =>
      service.deleteUserKey(
        create(DeleteUserKeyRequestSchema, { userId: "CAROL", publicKey: key }),
        context("deleteUserKey"),
      );
    assert.deepEqual(await remove(), { revokedTokens: 3 });
    assert.deepEqual(await remove(), { revokedTokens: 0 });
    assert.deepEqual(events, [
      {
        audit: "DeleteUserKey",
        userId: "carol",
        fingerprint: keyFingerprint(key),
        removed: true,
        revokedTokens: 3,
      },
      {
        audit: "DeleteUserKey",
        userId: "carol",
        fingerprint: keyFingerprint(key),
        removed: false,
        revokedTokens: 0,
      },
    ]);
  });

  it("lists keys oldest first, undated ones last by key, each with its fingerprint", async () => {
    const [a, b, c, d] = ["aa".repeat(32), "bb".repeat(32), "cc".repeat(32), "dd".repeat(32)];
    const keys: RegisteredKey[] = [
      { publicKey: d, addedAtMs: undefined },
      { publicKey: a, addedAtMs: 300 },
      { publicKey: c, addedAtMs: undefined },
      { publicKey: b, addedAtMs: 100 },
    ];
    const { store } = memoryStore(5, new Map([["dan", keys]]));
    const events: AuditEvent[] = [];
    const service = createUserKeyService({ store, audit: (event) => events.push(event) });
    const listed = await service.listUserKeys(
      create(ListUserKeysRequestSchema, { userId: "Dan" }),
      context("listUserKeys"),
    );
    assert.deepEqual(
      listed.keys?.map((k) => [k.publicKey, k.addedAtMs, k.fingerprint]),
      [
        [b, 100n, keyFingerprint(b)],
        [a, 300n, keyFingerprint(a)],
        [c, 0n, keyFingerprint(c)],
        [d, 0n, keyFingerprint(d)],
      ],
    );
    assert.deepEqual(events, [{ audit: "ListUserKeys", userId: "dan", keys: 4 }]);
  });
});
