import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { redisKeysOf } from "../../../src/store/keys.js";
import {
  refusal,
  type SignedRequest,
  signedRequestArgs,
  signedRequestKeys,
} from "../../../src/store/signed-request.js";
import {
  CREATE_TOKEN,
  DELETE_TOKEN,
  TokenScriptStatus as Status,
} from "../../../src/store/token-scripts.js";

const LIMITS = { replayWindowMs: "300000", rateCapacity: "30", ratePeriodMs: "60000" };

describe("signed call", () => {
  it("keys: the user's, with the call's token, and every key create and delete declare", () => {
    const userId = randomUUID();
    const redisKeys = redisKeysOf(userId);
    const keys = signedRequestKeys(userId, "some-token-id");
    assert.deepEqual(keys, {
      publicKeys: redisKeys.publicKeys,
      token: redisKeys.token("some-token-id"),
      names: redisKeys.names,
      live: redisKeys.live,
      replay: redisKeys.replay,
      rate: redisKeys.rate,
      nameIds: redisKeys.nameIds,
    });
    for (const script of [CREATE_TOKEN, DELETE_TOKEN]) {
      assert.deepEqual(Object.keys(keys).sort(), [...script.keys].sort(), script.command);
    }
  });

  it("args: the signer, the message and the limits, the arguments create and delete begin with", () => {
    const call: SignedRequest = {
      userId: randomUUID(),
      signerPublicKey: "ab".repeat(32),
      messageDigest: Buffer.alloc(32, 7),
    };
    const args = signedRequestArgs(call, LIMITS);
    assert.deepEqual(args, {
      signerPublicKey: call.signerPublicKey,
      messageDigest: call.messageDigest,
      ...LIMITS,
    });
    for (const script of [CREATE_TOKEN, DELETE_TOKEN]) {
      assert.deepEqual(
        script.args.slice(0, Object.keys(args).length),
        Object.keys(args),
        script.command,
      );
    }
  });

  it("refusal: each refusal status as its outcome, the wait only for the rate", () => {
    assert.deepEqual(refusal(Status.KEY_REVOKED, 0), { kind: "key-revoked" });
    assert.deepEqual(refusal(Status.REPLAYED, 0), { kind: "replayed" });
    assert.deepEqual(refusal(Status.RATE_LIMITED, 1500), {
      kind: "rate-limited",
      retryAfterMs: 1500,
    });
  });

  it("refusal: any other status is a defect, never taken for a refusal", () => {
    for (const status of [Status.DONE, Status.NOT_FOUND, Status.TOO_MANY_TOKENS]) {
      assert.throws(() => refusal(status, 0), /unexpected token script status/);
    }
  });
});
