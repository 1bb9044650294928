import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { connectError } from "../support/connect-error.js";
import { newUser, signedCreate, signedDelete } from "../support/signing.js";
import { tokenServiceSuite } from "../support/token-service-suite.js";

// TokenService and UserKeyService, continued (token-service.test.ts).

describe("TokenService and UserKeyService", () => {
  const { publicTokens, registeredUser } = tokenServiceSuite();

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
});
