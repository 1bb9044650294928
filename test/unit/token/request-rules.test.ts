import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ErrorInfoSchema,
  LocalizedMessageSchema,
} from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  checkCreateRequest,
  checkDeleteRequest,
  checkTimeWindow,
} from "../../../src/token/request-rules.js";

const good = {
  signature: "ab".repeat(64),
  timestamp: 1_700_000_000_000n,
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
};
const opts = { maxLifetimeSeconds: 31_536_000 };

function invalidMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.InvalidArgument);
    return err.rawMessage;
  }
  assert.fail("expected INVALID_ARGUMENT");
}

describe("checkCreateRequest", () => {
  it("defaults expiresIn to 604800 but keeps it undefined for the signed message", () => {
    const checked = checkCreateRequest(create(CreateTokenRequestSchema, good), opts);
    assert.equal(checked.expiresIn, undefined);
    assert.equal(checked.lifetimeSeconds, 604_800);
    assert.equal(checked.signature.length, 64);
  });

  it("requires a name above 604800 seconds, not at it", () => {
    const at = checkCreateRequest(
      create(CreateTokenRequestSchema, { ...good, expiresIn: 604_800n }),
      opts,
    );
    assert.equal(at.lifetimeSeconds, 604_800);
    assert.match(
      invalidMessage(() =>
        checkCreateRequest(
          create(CreateTokenRequestSchema, { ...good, expiresIn: 604_801n }),
          opts,
        ),
      ),
      /^name: is required/,
    );
  });

  it("honours the configured maximum lifetime", () => {
    const req = create(CreateTokenRequestSchema, { ...good, expiresIn: 100n, name: "n" });
    assert.equal(checkCreateRequest(req, { maxLifetimeSeconds: 100 }).lifetimeSeconds, 100);
    assert.match(
      invalidMessage(() => checkCreateRequest(req, { maxLifetimeSeconds: 99 })),
      /^expiresIn: must be at most 99 seconds$/,
    );
  });

  it("allows colons and spaces in a name (the message stays unambiguous)", () => {
    const req = create(CreateTokenRequestSchema, { ...good, name: "a:b c" });
    assert.equal(checkCreateRequest(req, opts).name, "a:b c");
  });

  it("timestamp at ±(2^53−1) passes the shape rule", () => {
    const max = 2n ** 53n - 1n;
    for (const timestamp of [max, -max]) {
      checkCreateRequest(create(CreateTokenRequestSchema, { ...good, timestamp }), opts);
    }
  });
});

describe("checkDeleteRequest", () => {
  it("accepts a tokenId of 128 characters", () => {
    const req = create(DeleteTokenRequestSchema, { ...good, tokenId: "t".repeat(128) });
    assert.equal(checkDeleteRequest(req).tokenId.length, 128);
  });
});

describe("checkTimeWindow", () => {
  const now = 1_700_000_000_000;
  for (const skew of [0, 120_000, -120_000]) {
    it(`accepts a skew of ${skew} ms`, () => {
      checkTimeWindow(BigInt(now + skew), now);
    });
  }
  for (const skew of [120_001, -120_001]) {
    it(`refuses a skew of ${skew} ms with "Signature expired"`, () => {
      assert.throws(
        () => checkTimeWindow(BigInt(now + skew), now),
        (err) =>
          err instanceof ConnectError &&
          err.code === Code.Unauthenticated &&
          err.rawMessage === "Signature expired",
      );
    });
  }
});

describe("checkTimeWindow's details", () => {
  const now = 1_700_000_000_000;
  function refusalOf(timestamp: bigint): ConnectError {
    try {
      checkTimeWindow(timestamp, now);
    } catch (err) {
      assert.ok(err instanceof ConnectError);
      return err;
    }
    assert.fail("expected a refusal");
  }

  for (const [offset, clock, said] of [
    [180_000, "ahead", "3.0 min ahead of"],
    [-121_500, "behind", "2.0 min behind"],
    [-90_000_000, "behind", "25.0 h behind"],
    [-now, "behind", "19676 days behind"],
  ] as const) {
    it(`a timestamp ${offset} ms off: ${said} server time, with the server time`, () => {
      const err = refusalOf(BigInt(now + offset));
      const [info] = err.findDetails(ErrorInfoSchema);
      assert.deepEqual(
        { reason: info?.reason, domain: info?.domain, metadata: info?.metadata },
        {
          reason: "TIMESTAMP_OUTSIDE_WINDOW",
          domain: "perps-tokens",
          metadata: {
            serverTimeMs: String(now),
            offsetMs: String(offset),
            clock,
            toleranceMs: "120000",
          },
        },
      );
      const [text] = err.findDetails(LocalizedMessageSchema);
      assert.equal(
        text?.message,
        `Signature expired: the timestamp is ${said} server time (2023-11-14T22:13:20.000Z); within ±2.0 min is accepted`,
      );
    });
  }
});
