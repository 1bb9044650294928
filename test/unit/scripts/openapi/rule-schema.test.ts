import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { ruleSchema } from "../../../../scripts/openapi/rule-schema.js";

const create = CreateTokenRequestSchema.field;

describe("ruleSchema: buf.validate rules as JSON Schema keywords", () => {
  it("pattern, and non-empty for a required string without presence", () => {
    assert.deepEqual(ruleSchema(create.signature), { pattern: "^[0-9a-f]{128}$", minLength: 1 });
  });

  it("uuid as format next to the pattern", () => {
    const schema = ruleSchema(create.userId);
    assert.equal(schema?.format, "uuid");
    assert.equal(typeof schema?.pattern, "string");
  });

  it("integer bounds: gte/lte as they are, gt as minimum + 1", () => {
    assert.deepEqual(ruleSchema(create.timestamp), {
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    assert.deepEqual(ruleSchema(create.expiresIn), {
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
  });

  it("lengths in characters, and a pattern JSON Schema reads as the validator does", () => {
    const schema = ruleSchema(create.name);
    assert.deepEqual([schema?.minLength, schema?.maxLength], [1, 128]);
    const re = new RegExp(String(schema?.pattern), "u");
    assert.equal(re.test("my-bot 🚀"), true);
    assert.equal(re.test("a\u0000"), false);
    assert.equal(re.test("a\u009f"), false);
    assert.equal(re.test("a\u00a0"), true);
  });

  it("max_len alone, with required's minLength", () => {
    assert.deepEqual(ruleSchema(DeleteTokenRequestSchema.field.tokenId), {
      maxLength: 128,
      minLength: 1,
    });
  });

  it("nothing for a field without rules", () => {
    assert.equal(ruleSchema(CreateTokenResponseSchema.field.token), undefined);
  });
});
