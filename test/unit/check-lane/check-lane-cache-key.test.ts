import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { generateToken, parseToken } from "@perps/token-client/protocol";
import { cacheKeyOf } from "../../../src/check-lane/check-lane.js";
import { redisKeysOf } from "../../../src/store/keys.js";

describe("the check lane's cache key", () => {
  it("is the key keys.ts spells for the token's user and id, for any token", () => {
    for (let i = 0; i < 2000; i++) {
      const userId = randomUUID();
      const tokenId = randomBytes(12).toString("base64url");
      const token = generateToken(userId, tokenId);
      const parsed = parseToken(token);
      assert.ok(parsed);
      assert.equal(
        cacheKeyOf(Buffer.from(token, "latin1")),
        redisKeysOf(parsed.userId).token(parsed.tokenId),
      );
    }
  });

  it("is none when a character of the user or the id is not base64url", () => {
    const token = generateToken(randomUUID(), randomBytes(12).toString("base64url"));
    for (const at of [3, 10, 24, 25, 40]) {
      const bytes = Buffer.from(token, "latin1");
      bytes[at] = "=".charCodeAt(0);
      assert.equal(cacheKeyOf(bytes), undefined, `a bad character at ${at}`);
    }
  });
});
