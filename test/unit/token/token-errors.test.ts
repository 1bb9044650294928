import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, type ConnectError } from "@connectrpc/connect";
import {
  ErrorInfoSchema,
  LocalizedMessageSchema,
} from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import {
  ERROR_DOMAIN,
  TIMESTAMP_OUTSIDE_WINDOW,
  TOKEN_ALREADY_CREATED,
} from "@perps/token-client/protocol";
import {
  alreadyCreated,
  BEARER_CHALLENGE,
  INVALID_TOKEN_CHALLENGE,
  invalidBearer,
  invalidSignature,
  missingBearer,
  nameTaken,
  refusalError,
  signatureExpired,
  tokenNotFound,
  tooManyTokens,
} from "../../../src/token/token-errors.js";

/** Code, message and response headers: what every protocol's answer is made of. */
function answer(e: ConnectError) {
  return { code: e.code, message: e.rawMessage, headers: Object.fromEntries(e.metadata) };
}

describe("signatureExpired", () => {
  const now = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

  it("keeps the contract's message and tells how far off the caller's clock is, and which way", () => {
    const e = signatureExpired(BigInt(now - 150_000), now, 120_000n);
    assert.deepEqual(answer(e), {
      code: Code.Unauthenticated,
      message: "Signature expired",
      headers: {},
    });
    const [info, ...more] = e.findDetails(ErrorInfoSchema);
    assert.equal(more.length, 0);
    assert.equal(info?.reason, TIMESTAMP_OUTSIDE_WINDOW);
    assert.equal(info?.domain, ERROR_DOMAIN);
    assert.deepEqual(info?.metadata, {
      serverTimeMs: String(now),
      offsetMs: "-150000",
      clock: "behind",
      toleranceMs: "120000",
    });
    assert.deepEqual(
      e.findDetails(LocalizedMessageSchema).map((m) => [m.locale, m.message]),
      [
        [
          "en-US",
          "Signature expired: the timestamp is 2.5 min behind server time (2026-01-02T03:04:05.678Z); within ±2.0 min is accepted",
        ],
      ],
    );
  });

  it("says ahead for a timestamp in the future", () => {
    const e = signatureExpired(BigInt(now + 121_000), now, 120_000n);
    const [info] = e.findDetails(ErrorInfoSchema);
    assert.equal(info?.metadata.clock, "ahead");
    assert.equal(info?.metadata.offsetMs, "121000");
    assert.match(e.findDetails(LocalizedMessageSchema)[0]?.message ?? "", /is 2\.0 min ahead of/);
  });
});

describe("the create and delete refusals", () => {
  it("answer the same Invalid signature for a wrong signature and a revoked key", () => {
    const expected = { code: Code.Unauthenticated, message: "Invalid signature", headers: {} };
    assert.deepEqual(answer(invalidSignature()), expected);
    assert.deepEqual(answer(refusalError({ kind: "key-revoked" })), expected);
  });

  it("answer a replay as Signature already used", () => {
    assert.deepEqual(answer(refusalError({ kind: "replayed" })), {
      code: Code.Unauthenticated,
      message: "Signature already used",
      headers: {},
    });
  });

  it("answer the rate with RESOURCE_EXHAUSTED and a whole-second retry-after of at least 1", () => {
    const retryAfter = (ms: number) =>
      refusalError({ kind: "rate-limited", retryAfterMs: ms }).metadata.get("retry-after");
    assert.equal(
      refusalError({ kind: "rate-limited", retryAfterMs: 1 }).code,
      Code.ResourceExhausted,
    );
    assert.equal(retryAfter(0), "1");
    assert.equal(retryAfter(1), "1");
    assert.equal(retryAfter(1000), "1");
    assert.equal(retryAfter(1001), "2");
    assert.equal(retryAfter(59_500), "60");
  });

  it("answer too many tokens with the limit, and when one frees up", () => {
    assert.deepEqual(answer(tooManyTokens(2500, 100)), {
      code: Code.ResourceExhausted,
      message: "the user already has 100 live tokens; delete one or wait for one to expire",
      headers: { "retry-after": "3" },
    });
  });

  it("name a taken name, and an unknown token, by their fields", () => {
    assert.deepEqual(answer(nameTaken()), {
      code: Code.AlreadyExists,
      message: "name: a live token of this user already has this name",
      headers: {},
    });
    assert.deepEqual(answer(tokenNotFound()), {
      code: Code.NotFound,
      message: "tokenId: no such token",
      headers: {},
    });
  });

  it("name the token a replayed create made, in the message and the details, never the token", () => {
    const e = alreadyCreated("YAnc9iX83Ws3U0fLFuOMmw");
    assert.deepEqual(answer(e), {
      code: Code.AlreadyExists,
      message: "Signature already used: this request created token YAnc9iX83Ws3U0fLFuOMmw",
      headers: {},
    });
    const [info] = e.findDetails(ErrorInfoSchema);
    assert.equal(info?.reason, TOKEN_ALREADY_CREATED);
    assert.equal(info?.domain, ERROR_DOMAIN);
    assert.deepEqual(info?.metadata, { tokenId: "YAnc9iX83Ws3U0fLFuOMmw" });
  });
});

describe("the bearer refusals", () => {
  it("challenge a request without a token (RFC 6750 §3)", () => {
    assert.equal(BEARER_CHALLENGE, 'Bearer realm="perps-tokens"');
    assert.deepEqual(answer(missingBearer()), {
      code: Code.Unauthenticated,
      message: "Bearer token required",
      headers: { "www-authenticate": BEARER_CHALLENGE },
    });
  });

  it("answer every token that is not live alike, with invalid_token (RFC 6750 §3.1)", () => {
    assert.equal(INVALID_TOKEN_CHALLENGE, 'Bearer realm="perps-tokens", error="invalid_token"');
    assert.deepEqual(answer(invalidBearer()), {
      code: Code.Unauthenticated,
      message: "Invalid token",
      headers: { "www-authenticate": INVALID_TOKEN_CHALLENGE },
    });
  });

  it("are a new error each time, so one call's headers never reach another", () => {
    assert.notEqual(invalidBearer(), invalidBearer());
    assert.notEqual(invalidBearer().metadata, invalidBearer().metadata);
  });
});
