import { type DescField, isFieldSet, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { StringRulesSchema } from "@perps/token-client/contract/buf/validate/validate_pb.js";
import type { JsonSchema } from "../../src/openapi/openapi-document.js";
import {
  fieldRules,
  integerBounds,
  isRequired,
} from "../../src/validation/validation-interceptor.js";

/**
 * The JSON Schema keywords of a request field's buf.validate rules, the
 * ones the service enforces (src/validation/): string length, pattern and
 * UUID format, integer bounds; a required string without presence is
 * non-empty. Rules JSON Schema cannot state are left to the description.
 * Patterns are copied as they are: the validator runs them as ECMAScript
 * regular expressions, as JSON Schema does.
 */
export function ruleSchema(field: DescField): JsonSchema | undefined {
  const rules = fieldRules(field);
  if (rules === undefined) {
    return undefined;
  }
  const schema: JsonSchema = {};
  const type = rules.type;
  if (type.case === "string") {
    const r = type.value;
    if (isFieldSet(r, StringRulesSchema.field.len)) {
      schema.minLength = Number(r.len);
      schema.maxLength = Number(r.len);
    }
    if (isFieldSet(r, StringRulesSchema.field.minLen)) {
      schema.minLength = Number(r.minLen);
    }
    if (isFieldSet(r, StringRulesSchema.field.maxLen)) {
      schema.maxLength = Number(r.maxLen);
    }
    if (r.wellKnown.case === "uuid" && r.wellKnown.value) {
      schema.format = "uuid";
    }
    if (isFieldSet(r, StringRulesSchema.field.pattern)) {
      schema.pattern = r.pattern;
    }
  }
  // A required string without presence cannot be empty.
  if (isRequired(field) && isImplicitString(field) && schema.minLength === undefined) {
    schema.minLength = 1;
  }
  const { lower, upper } = integerBounds(rules);
  if (lower !== undefined) {
    // Integers: `gt: n` is `minimum: n + 1`.
    schema.minimum = Number(lower.exclusive ? lower.value + 1n : lower.value);
  }
  if (upper !== undefined) {
    schema.maximum = Number(upper.exclusive ? upper.value - 1n : upper.value);
  }
  return Object.keys(schema).length === 0 ? undefined : schema;
}

// A proto3 string without `optional`: "required" can only mean non-empty.
function isImplicitString(field: DescField): boolean {
  return (
    field.fieldKind === "scalar" &&
    field.scalar === ScalarType.STRING &&
    field.presence === FeatureSet_FieldPresence.IMPLICIT
  );
}
