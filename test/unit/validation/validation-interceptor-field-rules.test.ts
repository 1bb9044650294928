import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
  DeleteTokenRequestSchema,
  ListTokensRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  fieldRules,
  integerBounds,
  isRequired,
  patternMessage,
} from "../../../src/validation/validation-interceptor.js";

// Read from the contract's own fields (proto/perps/token/v1/token.proto).
const create = CreateTokenRequestSchema.field;
const MAX = 9_007_199_254_740_991n;

describe("field rules, as the protos give them", () => {
  it("fieldRules: a field's buf.validate rules, undefined for a field with none", () => {
    assert.equal(fieldRules(create.name)?.type.case, "string");
    assert.equal(fieldRules(CreateTokenResponseSchema.field.token), undefined);
  });

  it("isRequired: only the fields marked required", () => {
    assert.equal(isRequired(create.signature), true);
    assert.equal(isRequired(create.timestamp), true);
    assert.equal(isRequired(create.name), false);
    assert.equal(isRequired(create.expiresIn), false);
    assert.equal(isRequired(CreateTokenResponseSchema.field.token), false);
  });

  it("patternMessage: the field's own words for its pattern, when it has them", () => {
    assert.equal(
      patternMessage(create.signature),
      "must be exactly 128 lowercase hex characters, without 0x prefix",
    );
    assert.equal(patternMessage(create.name), "must not contain control characters");
    assert.equal(patternMessage(DeleteTokenRequestSchema.field.tokenId), undefined);
  });

  it("integerBounds: each bound as given, and whether it is exclusive", () => {
    assert.deepEqual(integerBounds(fieldRules(create.expiresIn)), {
      lower: { value: 0n, exclusive: true },
      upper: { value: MAX, exclusive: false },
    });
    assert.deepEqual(integerBounds(fieldRules(create.timestamp)), {
      lower: { value: -MAX, exclusive: false },
      upper: { value: MAX, exclusive: false },
    });
    assert.deepEqual(integerBounds(fieldRules(ListTokensRequestSchema.field.pageSize)), {
      lower: { value: 0n, exclusive: false },
      upper: { value: 100n, exclusive: false },
    });
    assert.deepEqual(integerBounds(fieldRules(create.name)), {});
    assert.deepEqual(integerBounds(undefined), {});
  });
});
