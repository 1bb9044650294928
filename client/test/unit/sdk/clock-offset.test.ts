import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb.js";
import { clockOffsetOfJsonDetails } from "../../../src/sdk/clock-offset-detail.js";
import { fromConnectError } from "../../../src/sdk/connect-error-mapping.js";
import { TokenApiError } from "../../../src/sdk/token-api-error.js";

// The details the service attaches to "Signature expired" (a timestamp 3 minutes ahead).
const INFO = {
  reason: "TIMESTAMP_OUTSIDE_WINDOW",
  domain: "perps-tokens",
  metadata: {
    serverTimeMs: "1700000000000",
    offsetMs: "180000",
    clock: "ahead",
    toleranceMs: "120000",
  },
};

describe("TokenApiError's clock offset", () => {
  it("is read from a Connect or gRPC error's ErrorInfo", () => {
    const err = fromConnectError(
      new ConnectError("Signature expired", Code.Unauthenticated, undefined, [
        { desc: ErrorInfoSchema, value: INFO },
      ]),
    );
    assert.ok(err instanceof TokenApiError);
    assert.deepEqual(
      { offset: err.clockOffsetMs, server: err.serverTimeMs, message: err.message },
      { offset: 180_000, server: 1_700_000_000_000, message: "Signature expired" },
    );
  });

  it("is read from a REST body's details, behind as a negative offset", () => {
    const behind = { ...INFO, metadata: { ...INFO.metadata, offsetMs: "-600000" } };
    assert.deepEqual(
      clockOffsetOfJsonDetails([
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US" },
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", ...behind },
      ]),
      { clockOffsetMs: -600_000, serverTimeMs: 1_700_000_000_000 },
    );
  });

  it("is undefined for another reason, domain or a value that is not an integer", () => {
    const detail = { "@type": "type.googleapis.com/google.rpc.ErrorInfo", ...INFO };
    for (const wrong of [
      { ...detail, reason: "TOKEN_ALREADY_CREATED" },
      { ...detail, domain: "elsewhere" },
      { ...detail, metadata: { ...INFO.metadata, offsetMs: "3 minutes" } },
      { ...detail, metadata: { offsetMs: "180000" } },
    ]) {
      assert.equal(clockOffsetOfJsonDetails([wrong]), undefined, JSON.stringify(wrong));
    }
    const plain = fromConnectError(new ConnectError("Signature expired", Code.Unauthenticated));
    assert.ok(plain instanceof TokenApiError);
    assert.equal(plain.clockOffsetMs, undefined);
  });
});
