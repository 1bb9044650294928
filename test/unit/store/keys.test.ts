import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { generateToken, tokenIdOf } from "@perps/token-client/protocol";
import fc from "fast-check";
import {
  LIVE_MEMBER_BYTES,
  lastUseKeyOf,
  liveMemberOf,
  redisKeysOf,
  userTag,
} from "../../../src/store/keys.js";
import { canonicalUserId } from "../../../src/token/user-id.js";
import { isSpecUserId } from "../../support/spec-user-id.js";

const U = "0b3c4d5e-1f2a-4b4c-bd9e-0123456789ab";
const NIL = "00000000-0000-0000-0000-000000000000";
const MAX = "ffffffff-ffff-ffff-ffff-ffffffffffff";

/** Every key of one user, with a token id. */
function keysOf(userId: string, tokenId: string): string[] {
  const redisKeys = redisKeysOf(userId);
  return [
    redisKeys.publicKeys,
    redisKeys.publicKeysAdded,
    redisKeys.token(tokenId),
    redisKeys.lastUse(tokenId),
    redisKeys.names,
    redisKeys.live,
    redisKeys.replay,
    redisKeys.rate,
    redisKeys.nameIds,
  ];
}

/** What Redis Cluster hashes: the text between the first `{` and the next `}`, if not empty. */
function clusterHashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  return open === -1 || close === -1 || close === open + 1 ? undefined : key.slice(open + 1, close);
}

/** UUID text of 16 bytes, in lowercase or uppercase. */
const uuidText = fc
  .tuple(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.boolean())
  .map(([bytes, upper]) => {
    const hex = Buffer.from(bytes).toString("hex");
    const text = [8, 12, 16, 20].reduceRight((s, at) => `${s.slice(0, at)}-${s.slice(at)}`, hex);
    return upper ? text.toUpperCase() : text;
  });

describe("redis keys", () => {
  it("spell the layout: {<base64url of the UUID's 16 bytes>} and one letter", () => {
    const tag = "{CzxNXh8qS0y9ngEjRWeJqw}";
    assert.deepEqual(keysOf(U, "AAAAAAAAAAAAAAAA"), [
      `${tag}k`,
      `${tag}a`,
      `${tag}tAAAAAAAAAAAAAAAA`,
      `${tag}uAAAAAAAAAAAAAAAA`,
      `${tag}n`,
      `${tag}l`,
      `${tag}p`,
      `${tag}r`,
      `${tag}i`,
    ]);
    assert.equal(redisKeysOf(U).tokenPrefix, `${tag}t`);
    assert.equal(redisKeysOf(U).lastUsePrefix, `${tag}u`);
    // A token's last-use key, from its token key alone (the check lane has no other).
    const tokenId = tokenIdOf(randomBytes(32));
    assert.equal(lastUseKeyOf(redisKeysOf(U).token(tokenId)), redisKeysOf(U).lastUse(tokenId));
    assert.equal(userTag(NIL), "AAAAAAAAAAAAAAAAAAAAAA");
    assert.equal(userTag(MAX), "_____________________w");
  });

  it("a token key is at most 44 bytes (jemalloc's 48-byte class with its sds header)", () => {
    for (const userId of [U, NIL, MAX, randomUUID()]) {
      const key = redisKeysOf(userId).token(tokenIdOf(randomBytes(32)));
      assert.equal(Buffer.byteLength(key), 41);
      assert.ok(Buffer.byteLength(key) <= 44);
    }
  });

  it("a live member is the token id's 12 raw bytes, the id again in base64url", () => {
    const tokenId = tokenIdOf(randomBytes(32));
    const member = liveMemberOf(tokenId);
    assert.equal(member.length, LIVE_MEMBER_BYTES);
    assert.equal(member.toString("base64url"), tokenId);
  });

  it("the tag is the first 16 bytes of the user's tokens' body (the user's UUID bytes)", () => {
    const token = generateToken(U, tokenIdOf(randomBytes(32)));
    const body = Buffer.from(token.slice(3, -6), "base64url");
    assert.equal(body.subarray(0, 16).toString("base64url"), userTag(U));
  });

  it("the tag is derived case-insensitively", () => {
    for (const userId of [U, MAX, randomUUID()]) {
      assert.deepEqual(keysOf(userId.toUpperCase(), "id"), keysOf(userId, "id"));
      assert.deepEqual(keysOf(canonicalUserId(userId.toUpperCase()), "id"), keysOf(userId, "id"));
    }
  });

  it("every key of a user carries the user's tag, which never contains { or }", () => {
    fc.assert(
      fc.property(uuidText, (userId) => {
        const tag = userTag(userId);
        assert.match(tag, /^[A-Za-z0-9_-]{22}$/);
        for (const key of keysOf(userId, tokenIdOf(randomBytes(32)))) {
          assert.ok(key.startsWith(`{${tag}}`), key);
          assert.equal(clusterHashTag(key), tag, key);
        }
      }),
    );
  });

  it("a token id cannot move a token key out of its user's slot", () => {
    for (const tokenId of ["{x}", "}{", "{", `{${userTag(NIL)}}`]) {
      assert.equal(clusterHashTag(redisKeysOf(U).token(tokenId)), userTag(U));
    }
  });

  it("distinct users have distinct tags: the tag is the UUID's bytes", () => {
    fc.assert(
      fc.property(uuidText, (userId) => {
        const bytes = Buffer.from(userTag(userId), "base64url");
        assert.equal(bytes.toString("hex"), userId.replace(/-/g, "").toLowerCase());
      }),
    );
    const tags = new Set(Array.from({ length: 1000 }, () => userTag(randomUUID())));
    assert.equal(tags.size, 1000);
  });

  it("every valid user id has a tag; anything but UUID text is refused", () => {
    for (const userId of [U, U.toUpperCase(), NIL, MAX, MAX.toUpperCase(), randomUUID()]) {
      assert.equal(isSpecUserId(userId), true);
      assert.equal(userTag(canonicalUserId(userId)).length, 22);
    }
    const notUuids = [
      "",
      "probe",
      U.replace(/-/g, ""),
      `${U}0`,
      U.slice(0, -1),
      `${U.slice(0, -1)}g`,
      `{${U}}`,
      randomBytes(18).toString("hex"),
    ];
    for (const userId of notUuids) {
      assert.throws(() => userTag(userId), /UUID/, userId);
    }
  });
});
