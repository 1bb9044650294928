import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { connectError } from "../support/connect-error.js";
import { isGrpcError } from "../support/grpc-client.js";
import { newUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { tokenServiceSuite } from "../support/token-service-suite.js";

// TokenService and UserKeyService, continued (token-service.test.ts).

describe("TokenService and UserKeyService", () => {
  const { service, publicTokens, grpcKeys, registeredUser } = tokenServiceSuite();

  describe("UserKeyService", () => {
    it("is idempotent and allows at most 5 keys per user", async () => {
      const user = await registeredUser();
      await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      for (let i = 0; i < 4; i++) {
        const extra = await newUser(user.userId);
        await grpcKeys.putUserKey({ userId: user.userId, publicKey: extra.publicKey });
      }
      const sixth = await newUser(user.userId);
      await assert.rejects(
        grpcKeys.putUserKey({ userId: user.userId, publicKey: sixth.publicKey }),
        (err) => isGrpcError(err, GrpcStatus.FAILED_PRECONDITION),
      );
      await grpcKeys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
      await grpcKeys.putUserKey({ userId: user.userId, publicKey: sixth.publicKey });
      // Deleting a key that is not there is fine (idempotent).
      await grpcKeys.deleteUserKey({ userId: user.userId, publicKey: user.publicKey });
    });

    for (const [name, publicKey] of [
      ["the identity (small order)", `01${"00".repeat(31)}`],
      ["a point of order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"],
      ["a non-canonical encoding", `ed${"ff".repeat(30)}7f`],
      ["uppercase hex", "AB".repeat(32)],
      ["a short key", "ab".repeat(31)],
    ]) {
      it(`refuses ${name} with INVALID_ARGUMENT`, async () => {
        await assert.rejects(grpcKeys.putUserKey({ userId: randomUUID(), publicKey }), (err) =>
          isGrpcError(err, GrpcStatus.INVALID_ARGUMENT),
        );
      });
    }

    it("the identity-key forgery cannot be used: the key is never registered", async () => {
      const userId = randomUUID();
      const identity = `01${"00".repeat(31)}`;
      await assert.rejects(grpcKeys.putUserKey({ userId, publicKey: identity }));
      const forged = `${identity}${"00".repeat(32)}`;
      const err = await connectError(
        publicTokens.createToken({ signature: forged, timestamp: BigInt(Date.now()), userId }),
      );
      assert.equal(err.rawMessage, "Invalid signature");
    });

    it("refuses a bad userId", async () => {
      const user = await newUser();
      await assert.rejects(grpcKeys.putUserKey({ userId: "x", publicKey: user.publicKey }), (err) =>
        isGrpcError(err, GrpcStatus.INVALID_ARGUMENT),
      );
    });

    it("is not served on the public listener", async () => {
      const res = await fetch(`${service.publicUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(res.status, 404);
      const grpcPublicKeys = createOperatorGrpcClient(UserKeyService, service.publicAddress);
      try {
        const user = await newUser();
        await assert.rejects(
          grpcPublicKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey }),
          (err) => isGrpcError(err, GrpcStatus.UNIMPLEMENTED),
        );
      } finally {
        grpcPublicKeys.close();
      }
    });
  });
});
