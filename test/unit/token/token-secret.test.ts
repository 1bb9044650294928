import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import {
  generateToken,
  isWellFormedToken,
  TOKEN_DIGEST_BYTES,
  tokenDigest,
  tokenIdOf,
} from "../../../src/token/token-secret.js";

describe("token secrets", () => {
  it("tokens have the prefix, 256 random bits and a valid checksum, and differ", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      assert.match(token, /^pt_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
      assert.equal(isWellFormedToken(token), true);
      seen.add(token);
    }
    assert.equal(seen.size, 200);
  });

  it("a changed character or checksum is detected", () => {
    const token = generateToken();
    const flipped = token.slice(0, 10) + (token[10] === "a" ? "b" : "a") + token.slice(11);
    assert.equal(isWellFormedToken(flipped), false);
    const badSum = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
    assert.equal(isWellFormedToken(badSum), false);
    assert.equal(isWellFormedToken(`xx_${token.slice(3)}`), false);
    assert.equal(isWellFormedToken(token.slice(0, -1)), false);
    assert.equal(isWellFormedToken(""), false);
  });

  it("ids are 96 bits of SHA-256 over a domain tag and the message digest, URL-safe", () => {
    const digests = Array.from({ length: 100 }, () => randomBytes(32));
    const ids = new Set(digests.map(tokenIdOf));
    assert.equal(ids.size, 100);
    for (const id of ids) {
      assert.match(id, /^[A-Za-z0-9_-]{16}$/);
    }
    const digest = createHash("sha256").update("createToken:1:::u").digest();
    const expected = createHash("sha256")
      .update(Buffer.concat([Buffer.from("perps.token.v1 token id\0"), digest]))
      .digest()
      .subarray(0, 12)
      .toString("base64url");
    assert.equal(tokenIdOf(digest), expected);
    // Not the message digest itself, nor a prefix of it.
    assert.notEqual(tokenIdOf(digest), digest.subarray(0, 12).toString("base64url"));
  });

  it("tokenDigest is the first 28 raw bytes of the SHA-256", () => {
    const digest = tokenDigest("pt_x");
    assert.equal(TOKEN_DIGEST_BYTES, 28);
    assert.equal(digest.length, 28);
    assert.deepEqual(digest, createHash("sha256").update("pt_x").digest().subarray(0, 28));
  });
});
