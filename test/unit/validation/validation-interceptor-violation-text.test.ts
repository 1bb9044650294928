import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Violation } from "@bufbuild/protovalidate";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
  ListTokensRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { violationText } from "../../../src/validation/validation-interceptor.js";

// The violations protovalidate would report, on the contract's own fields
// (test/unit/validation/validation-interceptor-request-validator.test.ts runs
// protovalidate itself).
const violation = (ruleId: string, message = `protovalidate: ${ruleId}`) =>
  new Violation(message, ruleId, [], [], false);
const create = CreateTokenRequestSchema.field;
const MAX = 9_007_199_254_740_991n;

describe("violationText", () => {
  it("required: is required", () => {
    assert.equal(violationText(violation("required"), create.signature, undefined), "is required");
  });

  it("a pattern: the field's pattern_message, else protovalidate's words", () => {
    assert.equal(
      violationText(violation("string.pattern"), create.userId, "nope"),
      "must be a UUID (version 1-8, variant 8, 9, a or b; or the nil or all-f UUID)",
    );
    assert.equal(
      violationText(violation("string.pattern"), DeleteTokenRequestSchema.field.tokenId, "x"),
      "protovalidate: string.pattern",
    );
  });

  it("string lengths: the range when both bounds are set, else the one", () => {
    assert.equal(
      violationText(violation("string.min_len"), create.name, ""),
      "must be 1 to 128 characters",
    );
    assert.equal(
      violationText(violation("string.max_len"), create.name, "n".repeat(129)),
      "must be 1 to 128 characters",
    );
    assert.equal(
      violationText(violation("string.max_len"), DeleteTokenRequestSchema.field.tokenId, ""),
      "must be at most 128 characters",
    );
  });

  it("integer ranges: the exclusive bound broken, else the whole range", () => {
    assert.equal(
      violationText(violation("int64.gt_lte"), create.expiresIn, 0n),
      "must be greater than 0",
    );
    assert.equal(
      violationText(violation("int64.gt_lte"), create.expiresIn, MAX + 1n),
      `must be an integer between 1 and ${MAX}`,
    );
    assert.equal(
      violationText(violation("int64.gte_lte"), create.timestamp, -MAX - 1n),
      `must be an integer between ${-MAX} and ${MAX}`,
    );
    assert.equal(
      violationText(violation("int32.gte_lte"), ListTokensRequestSchema.field.pageSize, 101),
      "must be an integer between 0 and 100",
    );
  });

  it("any other rule: protovalidate's words", () => {
    assert.equal(
      violationText(violation("string.uuid", "value must be a valid UUID"), create.userId, "x"),
      "value must be a valid UUID",
    );
  });
});
