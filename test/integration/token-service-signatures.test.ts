import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { connectError } from "../support/connect-error.js";
import { newUser, signedCreate, signedDelete, signText } from "../support/signing.js";
import { tokenServiceSuite } from "../support/token-service-suite.js";

// TokenService and UserKeyService, continued (token-service.test.ts).

describe("TokenService and UserKeyService", () => {
  const { publicTokens, grpcKeys, registeredUser } = tokenServiceSuite();

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
});
