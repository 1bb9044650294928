import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { TOKEN_DIGEST_BYTES } from "@perps/token-client/protocol";
import {
  decodeTokenRecord,
  encodeTokenRecord,
  TOKEN_RECORD_LAYOUT,
} from "../../../src/store/token-record.js";
import { createRequestValidator } from "../../../src/validation/request-validator.js";

describe("token record", () => {
  for (const name of ["", "my-bot", "bot ü 🤖", "x".repeat(128)]) {
    it(`round-trips layout 1 with the name ${JSON.stringify(name.slice(0, 12))}`, () => {
      const digest = randomBytes(TOKEN_DIGEST_BYTES);
      const expiresAtMs = 1_795_401_308_789;
      const record = encodeTokenRecord(digest, expiresAtMs, name);
      assert.equal(record.length, TOKEN_RECORD_LAYOUT.headBytes + Buffer.byteLength(name));
      assert.equal(record[TOKEN_DIGEST_BYTES], TOKEN_RECORD_LAYOUT.marker);
      assert.deepEqual(decodeTokenRecord(record), { digest, name, expiresAtMs });
    });
  }

  it("reads layout 0 (digest, then the name) with no expiry", () => {
    const digest = randomBytes(TOKEN_DIGEST_BYTES);
    assert.deepEqual(decodeTokenRecord(digest), { digest, name: "", expiresAtMs: undefined });
    assert.deepEqual(decodeTokenRecord(Buffer.concat([digest, Buffer.from("my-bot")])), {
      digest,
      name: "my-bot",
      expiresAtMs: undefined,
    });
  });

  it("refuses what is neither layout", () => {
    assert.equal(decodeTokenRecord(randomBytes(TOKEN_DIGEST_BYTES - 1)), undefined);
    const cut = encodeTokenRecord(randomBytes(TOKEN_DIGEST_BYTES), 1, "").subarray(0, -1);
    assert.equal(decodeTokenRecord(cut), undefined);
    assert.throws(() => encodeTokenRecord(randomBytes(TOKEN_DIGEST_BYTES + 1), 1, ""));
  });

  it("the marker can never start a name: the proto refuses control characters in names", () => {
    const name = `${String.fromCharCode(TOKEN_RECORD_LAYOUT.marker)}bot`;
    const problems = createRequestValidator().problems(
      CreateTokenRequestSchema,
      create(CreateTokenRequestSchema, { name }),
    );
    assert.ok(problems.includes("name: must not contain control characters"), problems.join("; "));
  });
});
