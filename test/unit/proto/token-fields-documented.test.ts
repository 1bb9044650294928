import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  CreateTokenRequestSchema,
  TokenSummarySchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";

const API_DOC = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8");

// docs/api.md is the contract's reference for people: a field added to what
// a create sends or a listing answers (token.proto) fails here until the
// document names it, by its JSON name in code.
describe("docs/api.md names every field", () => {
  for (const schema of [CreateTokenRequestSchema, TokenSummarySchema]) {
    for (const field of schema.fields) {
      it(`${schema.name}.${field.name}`, () => {
        assert.ok(
          API_DOC.includes(`\`${field.jsonName}\``),
          `docs/api.md does not name \`${field.jsonName}\` (${schema.typeName})`,
        );
      });
    }
  }
});
