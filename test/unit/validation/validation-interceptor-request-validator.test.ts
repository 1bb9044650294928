import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createRequestValidator } from "../../../src/validation/validation-interceptor.js";

const good = {
  signature: "ab".repeat(64),
  timestamp: 1_700_000_000_000n,
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
};
const validator = createRequestValidator();
const MAX = 9_007_199_254_740_991n;

function createProblems(init: MessageInitShape<typeof CreateTokenRequestSchema>): string[] {
  return validator.problems(CreateTokenRequestSchema, create(CreateTokenRequestSchema, init));
}

describe("createRequestValidator: the proto's rules, in the service's words", () => {
  it("a valid request has no problems; optional fields may be left out", () => {
    assert.deepEqual(createProblems(good), []);
    assert.deepEqual(createProblems({ ...good, expiresIn: 1n, name: "🚀".repeat(128) }), []);
  });

  it("required means present: a timestamp of 0 passes, a missing one does not", () => {
    assert.deepEqual(createProblems({ ...good, timestamp: 0n }), []);
    assert.deepEqual(createProblems({ ...good, timestamp: undefined }), ["timestamp: is required"]);
  });

  it("names every wrong field at once, by JSON name, in field order, one problem each", () => {
    assert.deepEqual(createProblems({ userId: "nope", expiresIn: -1n, name: "a\u0007" }), [
      "signature: is required",
      "timestamp: is required",
      "userId: must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID)",
      "expiresIn: must be greater than 0",
      "name: must not contain control characters",
    ]);
    const empty = create(DeleteTokenRequestSchema);
    assert.deepEqual(validator.problems(DeleteTokenRequestSchema, empty), [
      "signature: is required",
      "timestamp: is required",
      "tokenId: is required",
      "userId: is required",
    ]);
  });

  for (const [name, init, problem] of [
    ["uppercase signature", { signature: "AB".repeat(64) }, /^signature: must be exactly 128/],
    ["0x signature", { signature: `0x${"ab".repeat(63)}` }, /^signature: must be exactly 128/],
    ["userId version 0", { userId: "0b3c4d5e-1f2a-0b4c-8d9e-0123456789ab" }, /^userId: must be/],
    [
      "timestamp above 2^53-1",
      { timestamp: MAX + 1n },
      /^timestamp: must be an integer between -9007199254740991 and 9007199254740991$/,
    ],
    [
      "timestamp below -(2^53-1)",
      { timestamp: -MAX - 1n },
      /^timestamp: must be an integer between/,
    ],
    ["expiresIn 0", { expiresIn: 0n }, /^expiresIn: must be greater than 0$/],
    [
      "expiresIn above 2^53-1",
      { expiresIn: MAX + 1n },
      /^expiresIn: must be an integer between 1 and 9007199254740991$/,
    ],
    ["empty name", { name: "" }, /^name: must be 1 to 128 characters$/],
    ["name of 129 characters", { name: "n".repeat(129) }, /^name: must be 1 to 128 characters$/],
    ["name with DEL", { name: "a\u007f" }, /^name: must not contain control characters$/],
    ["name with a C1 control", { name: "a\u0085" }, /^name: must not contain control characters$/],
  ] as const) {
    it(`refuses ${name}`, () => {
      const problems = createProblems({ ...good, ...init });
      assert.equal(problems.length, 1, problems.join("; "));
      assert.match(problems[0] ?? "", problem);
    });
  }

  it("a tokenId above 128 characters", () => {
    const req = create(DeleteTokenRequestSchema, { ...good, tokenId: "🚀".repeat(129) });
    assert.deepEqual(validator.problems(DeleteTokenRequestSchema, req), [
      "tokenId: must be at most 128 characters",
    ]);
  });
});
