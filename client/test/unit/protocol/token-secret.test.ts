import assert from "node:assert/strict";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { crc32 } from "node:zlib";
import fc from "fast-check";
import {
  generateToken,
  isWellFormedToken,
  parseToken,
  TOKEN_DIGEST_BYTES,
  TOKEN_LENGTH,
  tokenDigest,
  tokenIdOf,
} from "../../../src/protocol/token-secret.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function checksumOf(body: string): string {
  let rest = crc32(body);
  let out = "";
  for (let i = 0; i < 6; i++) {
    out = BASE62.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

describe("token secrets", () => {
  const USER = "0b3c5e7a-1d2f-4a6b-8c9d-0e1f2a3b4c5d";
  const ID = tokenIdOf(randomBytes(32));

  it("tokens have the prefix, 80 base64url characters and a valid checksum, and differ", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken(USER, ID);
      assert.match(token, /^pt_[A-Za-z0-9_-]{80}[0-9A-Za-z]{6}$/);
      assert.equal(token.length, TOKEN_LENGTH);
      assert.equal(isWellFormedToken(token), true);
      seen.add(token);
    }
    assert.equal(seen.size, 200);
  });

  it("the body is the user's UUID bytes, the id's bytes and 32 random bytes", () => {
    const tokens = Array.from({ length: 200 }, () => generateToken(USER, ID));
    const bodies = tokens.map((t) => Buffer.from(t.slice(3, -6), "base64url"));
    for (const body of bodies) {
      assert.equal(body.length, 60);
      assert.deepEqual(body.subarray(0, 16), Buffer.from(USER.replace(/-/g, ""), "hex"));
      assert.equal(body.subarray(16, 28).toString("base64url"), ID);
    }
    // The secret part is random: every byte value shows up across 200 × 32 bytes.
    const values = new Set(bodies.flatMap((b) => [...b.subarray(28)]));
    assert.equal(values.size, 256);
  });

  it("parseToken gives back the lowercase user and the id, whatever the case at create", () => {
    const upper = USER.toUpperCase();
    const token = generateToken(upper, ID);
    assert.deepEqual(parseToken(token), { userId: USER, tokenId: ID });
    assert.deepEqual(parseToken(generateToken(USER, ID)), { userId: USER, tokenId: ID });
    for (let i = 0; i < 100; i++) {
      const user = randomUUID();
      const id = tokenIdOf(randomBytes(32));
      assert.deepEqual(parseToken(generateToken(user, id)), { userId: user, tokenId: id });
    }
  });

  it("generateToken refuses a user that is not UUID text and an id that is not 12 bytes", () => {
    assert.throws(() => generateToken("not-a-uuid", ID));
    assert.throws(() => generateToken(USER, "short"));
    assert.throws(() => generateToken(USER, `${ID}AAAA`));
  });

  it("a changed character, checksum, prefix or length is detected", () => {
    const token = generateToken(USER, ID);
    const flip = (at: number) =>
      token.slice(0, at) + (token[at] === "a" ? "b" : "a") + token.slice(at + 1);
    const bad = [
      flip(10),
      flip(50),
      token.slice(0, -1) + (token.endsWith("0") ? "1" : "0"),
      `xx_${token.slice(3)}`,
      `PT_${token.slice(3)}`,
      token.slice(0, -1),
      `${token}0`,
      `${token.slice(0, 40)}+${token.slice(41)}`,
      ` ${token}`,
      "",
      "pt_",
      "x".repeat(1 << 20),
      `pt_${"A".repeat(1 << 20)}`,
    ];
    for (const t of bad) {
      assert.equal(isWellFormedToken(t), false, t.slice(0, 100));
      assert.equal(parseToken(t), undefined, t.slice(0, 100));
    }
  });

  it("parseToken never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 120 }), (s) => {
        assert.equal(parseToken(s), undefined);
      }),
    );
    // Any 60 bytes with the right checksum parse: a checksum is no MAC, the digest check decides.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 60, maxLength: 60 }), (bytes) => {
        const body = `pt_${Buffer.from(bytes).toString("base64url")}`;
        const parsed = parseToken(body + checksumOf(body));
        assert.ok(parsed !== undefined);
        assert.equal(parsed.userId.replace(/-/g, ""), Buffer.from(bytes).toString("hex", 0, 16));
        assert.equal(parsed.tokenId, Buffer.from(bytes).toString("base64url", 16, 28));
      }),
    );
  });

  it("the checksum is CRC32 of everything before it, in 6 base62 digits", () => {
    const token = generateToken(USER, ID);
    assert.equal(token.slice(-6), checksumOf(token.slice(0, -6)));
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
