import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { isGrpcError } from "../support/grpc-client.js";
import { type HttpAnswer, IDENTITY_KEY, PATH } from "../support/hostile-input-checks.js";
import { hostileInputSuite } from "../support/hostile-input-suite.js";
import type { Fields } from "../support/hostile-json-bodies.js";
import { newUser, signedCreate, signText, type TestUser } from "../support/signing.js";

// Hostile input, continued (hostile-input.test.ts fuzzes): one compact test
// per way of forging a request.

describe("hostile input", () => {
  const { service, grpcKeys, grpcTokens, registeredUser, http } = hostileInputSuite();

  describe("forgery: each way of forging a request is refused with 401 Invalid signature", () => {
    async function restCall(method: string, fields: Fields): Promise<HttpAnswer> {
      return http(service.publicUrl, method, PATH, Buffer.from(JSON.stringify(fields)));
    }

    function assertInvalidSignature(res: HttpAnswer): void {
      assert.equal(res.status, 401, `${res.status} ${res.text}`);
      assert.deepEqual(JSON.parse(res.text), {
        code: 16,
        message: "Invalid signature",
        details: [],
      });
    }

    async function createBody(signer: TestUser, userId: string, message?: string) {
      const timestamp = Date.now();
      const text = message ?? `createToken:${timestamp}:::${userId}`;
      return { signature: await signText(signer.secretKey, text), timestamp, userId };
    }

    it("a signature by another user's key", async () => {
      const alice = await registeredUser();
      const mallory = await registeredUser();
      assertInvalidSignature(await restCall("POST", await createBody(mallory, alice.userId)));
      // Mallory's signature is good for Mallory: only the key is wrong.
      const own = await restCall("POST", await createBody(mallory, mallory.userId));
      assert.equal(own.status, 201, own.text);
    });

    it("a key deleted after registration", async () => {
      const victim = await registeredUser();
      const before = await restCall("POST", await createBody(victim, victim.userId));
      assert.equal(before.status, 201, before.text);
      await grpcKeys.deleteUserKey({ userId: victim.userId, publicKey: victim.publicKey });
      assertInvalidSignature(await restCall("POST", await createBody(victim, victim.userId)));
    });

    it("the message's fields in another order", async () => {
      const u = await registeredUser();
      const t = Date.now();
      const id = u.userId;
      for (const message of [
        `createToken:${id}:${t}:60:n`,
        `createToken:${t}:n:60:${id}`,
        `createToken:60:${t}:n:${id}`,
        `${t}:createToken:60:n:${id}`,
      ]) {
        const body = {
          signature: await signText(u.secretKey, message),
          timestamp: t,
          userId: id,
          expiresIn: 60,
          name: "n",
        };
        assertInvalidSignature(await restCall("POST", body));
      }
      const token = await grpcTokens.createToken(await signedCreate(u));
      const reordered = `deleteToken:${t}:${id}:${token.id}`;
      assertInvalidSignature(
        await restCall("DELETE", {
          signature: await signText(u.secretKey, reordered),
          timestamp: t,
          tokenId: token.id,
          userId: id,
        }),
      );
    });

    it("a create signature used for delete (and a delete signature used for create)", async () => {
      const u = await registeredUser();
      const token = await grpcTokens.createToken(await signedCreate(u));
      const t = Date.now();
      const createSignature = await signText(u.secretKey, `createToken:${t}:::${u.userId}`);
      assertInvalidSignature(
        await restCall("DELETE", {
          signature: createSignature,
          timestamp: t,
          tokenId: token.id,
          userId: u.userId,
        }),
      );
      const deleteSignature = await signText(
        u.secretKey,
        `deleteToken:${t}:${token.id}:${u.userId}`,
      );
      assertInvalidSignature(
        await restCall("POST", { signature: deleteSignature, timestamp: t, userId: u.userId }),
      );
      // The token is untouched: its own delete works.
      const ok = await restCall("DELETE", {
        signature: await signText(u.secretKey, `deleteToken:${t}:${token.id}:${u.userId}`),
        timestamp: t,
        tokenId: token.id,
        userId: u.userId,
      });
      assert.equal(ok.status, 200, ok.text);
    });

    it("a small-order key: PutUserKey refuses the identity, and its universal forgery is refused", async () => {
      const forged = `${IDENTITY_KEY}${"00".repeat(32)}`;
      // R = identity, S = 0 verifies for any message under the identity key with a lax verifier.
      assert.equal(forged.length, 128);
      for (const u of [await newUser(), await registeredUser()]) {
        await assert.rejects(
          grpcKeys.putUserKey({ userId: u.userId, publicKey: IDENTITY_KEY }),
          (err) => isGrpcError(err, grpc.status.INVALID_ARGUMENT),
        );
        assertInvalidSignature(
          await restCall("POST", { signature: forged, timestamp: Date.now(), userId: u.userId }),
        );
        assertInvalidSignature(
          await restCall("DELETE", {
            signature: forged,
            timestamp: Date.now(),
            tokenId: "any",
            userId: u.userId,
          }),
        );
      }
    });
  });
});
