import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  CreateTokenRequestSchema,
  TokenSummarySchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { TOKEN_DIGEST_BYTES } from "@perps/token-client/protocol";
import fc from "fast-check";
import { TokenRecordSchema } from "../../../src/gen/perps/tokenstore/v1/token_record_pb.js";
import { DEFAULT_GRANTS, tokenGrants } from "../../../src/store/token-grants.js";
import {
  decodeTokenRecord,
  encodeTokenRecord,
  TOKEN_RECORD_LAYOUT,
  tokenRecordExtras,
} from "../../../src/store/token-record.js";
import { createRequestValidator } from "../../../src/validation/validation-interceptor.js";

const EXPIRES_AT_MS = 1_795_401_308_789;

/** A layout 1 record, as the release before layout 2 wrote it. */
function layout1(digest: Buffer, expiresAtMs: number, name: string): Buffer {
  const expiry = Buffer.alloc(8);
  expiry.writeBigUInt64BE(BigInt(expiresAtMs));
  return Buffer.concat([digest, Buffer.of(0x01), expiry, Buffer.from(name)]);
}

/** Fields no TokenRecord declares, one of each wire type a field can have. */
function unknownFields(text: string, n: number): Uint8Array {
  return new BinaryWriter()
    .tag(1000, WireType.LengthDelimited)
    .string(text)
    .tag(1001, WireType.Varint)
    .uint64(BigInt(n))
    .tag(1002, WireType.Bit64)
    .fixed64(BigInt(n))
    .tag(1003, WireType.Bit32)
    .fixed32(n)
    .finish();
}

describe("token record", () => {
  for (const name of ["", "my-bot", "bot ü 🤖", "x".repeat(128)]) {
    it(`round-trips layout 2 with the name ${JSON.stringify(name.slice(0, 12))}`, () => {
      const digest = randomBytes(TOKEN_DIGEST_BYTES);
      const record = encodeTokenRecord({ digest, name, expiresAtMs: EXPIRES_AT_MS, extras: {} });
      assert.deepEqual(record.subarray(0, TOKEN_DIGEST_BYTES), digest);
      assert.equal(record[TOKEN_DIGEST_BYTES], TOKEN_RECORD_LAYOUT.marker);
      // The message after the head is TokenRecord's own encoding.
      assert.deepEqual(
        record.subarray(TOKEN_RECORD_LAYOUT.headBytes),
        Buffer.from(
          toBinary(
            TokenRecordSchema,
            create(TokenRecordSchema, { name, expiresAtMs: BigInt(EXPIRES_AT_MS) }),
          ),
        ),
      );
      assert.deepEqual(decodeTokenRecord(record), {
        digest,
        name,
        expiresAtMs: EXPIRES_AT_MS,
        grants: DEFAULT_GRANTS,
      });
    });
  }

  it("the bearer check's decoder agrees with protobuf's, fields it does not know skipped", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 128 }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.string(),
        fc.nat(),
        fc.boolean(),
        (name, expiresAtMs, text, n, unknownFirst) => {
          const digest = randomBytes(TOKEN_DIGEST_BYTES);
          const known = toBinary(
            TokenRecordSchema,
            create(TokenRecordSchema, { name, expiresAtMs: BigInt(expiresAtMs) }),
          );
          const unknown = unknownFields(text, n);
          const message = unknownFirst ? [unknown, known] : [known, unknown];
          const record = Buffer.concat([digest, Buffer.of(TOKEN_RECORD_LAYOUT.marker), ...message]);
          assert.deepEqual(decodeTokenRecord(record), {
            digest,
            name,
            expiresAtMs,
            grants: DEFAULT_GRANTS,
          });
        },
      ),
    );
  });

  it("is as long as docs/storage.md says: a session token's 43 bytes, a named one's 45 + its name", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    const created = { createdAtMs: BigInt(EXPIRES_AT_MS - 3_600_000) };
    const record = (name: string) =>
      encodeTokenRecord({ digest, name, expiresAtMs: EXPIRES_AT_MS, extras: created });
    assert.equal(record("").length, 43, "within Redis' 44-byte embstr");
    assert.equal(record("bot").length, 45 + 3);
    assert.equal(record("x".repeat(100)).length, 45 + 100);
  });

  it("reads layout 1 (digest, 0x01, expiry, then the name)", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    assert.deepEqual(decodeTokenRecord(layout1(digest, EXPIRES_AT_MS, "my-bot")), {
      digest,
      name: "my-bot",
      expiresAtMs: EXPIRES_AT_MS,
      grants: DEFAULT_GRANTS,
    });
  });

  it("reads layout 0 (digest, then the name) with no expiry", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    assert.deepEqual(decodeTokenRecord(digest), {
      digest,
      name: "",
      expiresAtMs: undefined,
      grants: DEFAULT_GRANTS,
    });
    assert.deepEqual(decodeTokenRecord(Buffer.concat([digest, Buffer.from("my-bot")])), {
      digest,
      name: "my-bot",
      expiresAtMs: undefined,
      grants: DEFAULT_GRANTS,
    });
  });

  it("refuses what is no layout", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    assert.equal(decodeTokenRecord(digest.subarray(1)), undefined);
    const named = encodeTokenRecord({ digest, name: "bot", expiresAtMs: 1, extras: {} });
    assert.equal(decodeTokenRecord(named.subarray(0, -1)), undefined);
    assert.equal(decodeTokenRecord(layout1(digest, 1, "").subarray(0, -1)), undefined);
    // A varint cut short, and a wire type no field has.
    assert.equal(
      decodeTokenRecord(Buffer.concat([digest, Buffer.of(0x02, 0x08, 0x80)])),
      undefined,
    );
    assert.equal(decodeTokenRecord(Buffer.concat([digest, Buffer.of(0x02, 0x0b)])), undefined);
    assert.throws(() =>
      encodeTokenRecord({
        digest: randomBytes(TOKEN_DIGEST_BYTES + 1),
        name: "",
        expiresAtMs: 1,
        extras: {},
      }),
    );
  });

  it("the extras: what a create stored, their defaults for an older layout", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    const defaults = tokenRecordExtras(layout1(digest, EXPIRES_AT_MS, "my-bot"));
    // Every field of TokenRecord but the two every layout holds, each given a value.
    const samples: Record<string, unknown> = {
      scopes: ["read", "withdraw"],
      allowedIps: ["203.0.113.7", "2001:db8::/32"],
      createdAtMs: 1_795_000_000_000n,
    };
    const extras = {};
    for (const field of TokenRecordSchema.fields) {
      if (field.localName === "name" || field.localName === "expiresAtMs") {
        continue;
      }
      assert.ok(field.localName in samples, `${field.localName}: give this test a sample`);
      Reflect.set(extras, field.localName, samples[field.localName]);
    }
    assert.deepEqual(Object.keys(defaults).sort(), Object.keys(extras).sort());
    const stored = encodeTokenRecord({
      digest,
      name: "my-bot",
      expiresAtMs: EXPIRES_AT_MS,
      extras,
    });
    assert.deepEqual(tokenRecordExtras(stored), extras);
    assert.deepEqual(decodeTokenRecord(stored), {
      digest,
      name: "my-bot",
      expiresAtMs: EXPIRES_AT_MS,
      grants: tokenGrants(["read", "withdraw"], ["203.0.113.7", "2001:db8::/32"]),
    });
    assert.deepEqual(tokenRecordExtras(digest), defaults);
  });

  // The listing answers the stored fields by name (token-service.ts): a field
  // stored and not listed, or listed and not stored, fails here.
  // The instants are stored as Unix ms and listed as text; the last use has a key of its own.
  it("stores exactly what a listing answers: TokenSummary's fields but the id and the instants", () => {
    const listed = TokenSummarySchema.fields
      .map((field) => field.localName)
      .filter(
        (name) => !["id", "expiresAt", "expiresAtTime", "createdAt", "lastUsedAt"].includes(name),
      );
    const stored = TokenRecordSchema.fields
      .map((field) => field.localName)
      .filter((name) => name !== "expiresAtMs" && name !== "createdAtMs");
    assert.deepEqual(stored.sort(), listed.sort());
  });

  for (const marker of [TOKEN_RECORD_LAYOUT.marker, TOKEN_RECORD_LAYOUT.layout1Marker]) {
    it(`the marker 0x0${marker} can never start a name: the proto refuses control characters`, () => {
      const name = `${String.fromCharCode(marker)}bot`;
      const problems = createRequestValidator().problems(
        CreateTokenRequestSchema,
        create(CreateTokenRequestSchema, { name }),
      );
      assert.ok(
        problems.includes("name: must not contain control characters"),
        problems.join("; "),
      );
    });
  }
});
