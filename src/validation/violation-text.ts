import { type DescField, isFieldSet } from "@bufbuild/protobuf";
import type { Violation } from "@bufbuild/protovalidate";
import { StringRulesSchema } from "@perps/token-client/contract/buf/validate/validate_pb.js";
import { fieldRules, integerBounds, patternMessage } from "./field-rules.js";

/**
 * What a client is told about one violated rule, after "<field>: ": the
 * service's own wording for the rules its protos use (the field's
 * `pattern_message` for a pattern), protovalidate's for any other.
 * `value` is the field's value, which tells which bound of a range it broke.
 */
export function violationText(violation: Violation, field: DescField, value: unknown): string {
  const rules = fieldRules(field);
  const id = violation.ruleId;
  if (id === "required") {
    return "is required";
  }
  if (id.endsWith(".pattern")) {
    return patternMessage(field) ?? violation.message;
  }
  if (rules?.type.case === "string") {
    const r = rules.type.value;
    const both =
      isFieldSet(r, StringRulesSchema.field.minLen) &&
      isFieldSet(r, StringRulesSchema.field.maxLen);
    switch (id) {
      case "string.len":
        return `must be exactly ${r.len} characters`;
      case "string.min_len":
      case "string.max_len":
        return both
          ? `must be ${r.minLen} to ${r.maxLen} characters`
          : id === "string.min_len"
            ? `must be at least ${r.minLen} characters`
            : `must be at most ${r.maxLen} characters`;
    }
  }
  if (typeof value === "bigint" || typeof value === "number") {
    const text = rangeText(integerBounds(rules), BigInt(value));
    if (text !== undefined) {
      return text;
    }
  }
  return violation.message;
}

/** The wording of a broken integer range: the bound broken, or the whole range. */
function rangeText(
  { lower, upper }: ReturnType<typeof integerBounds>,
  value: bigint,
): string | undefined {
  const min = lower === undefined ? undefined : lower.exclusive ? lower.value + 1n : lower.value;
  const max = upper === undefined ? undefined : upper.exclusive ? upper.value - 1n : upper.value;
  const below = min !== undefined && value < min;
  if (below && lower?.exclusive === true) {
    return `must be greater than ${lower.value}`;
  }
  if (min !== undefined && max !== undefined) {
    return `must be an integer between ${min} and ${max}`;
  }
  if (below) {
    return `must be at least ${min}`;
  }
  if (max !== undefined && value > max) {
    return `must be at most ${max}`;
  }
  return undefined;
}
