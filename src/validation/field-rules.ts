import { type DescField, getOption, hasOption } from "@bufbuild/protobuf";
import { type FieldRules, field } from "@perps/token-client/contract/buf/validate/validate_pb.js";
import { pattern_message } from "@perps/token-client/contract/perps/api/v1/field_rules_pb.js";

/** The field's `(buf.validate.field)` rules; undefined when it has none. */
export function fieldRules(f: DescField): FieldRules | undefined {
  return hasOption(f, field) ? getOption(f, field) : undefined;
}

/**
 * True when the request must carry the field: `(buf.validate.field).required`.
 * On a field with presence that means set, on one without it not the zero
 * value (an empty string is absent on the wire anyway).
 */
export function isRequired(f: DescField): boolean {
  return fieldRules(f)?.required === true;
}

/** What a value not matching the field's pattern is told: `(perps.api.v1.pattern_message)`. */
export function patternMessage(f: DescField): string | undefined {
  return hasOption(f, pattern_message) ? getOption(f, pattern_message) : undefined;
}

/** Bounds of an integer field's rules (`gt`/`gte`, `lt`/`lte`), as given. */
export interface IntegerBounds {
  /** The lower bound and whether it is exclusive (`gt`). */
  readonly lower?: { readonly value: bigint; readonly exclusive: boolean };
  /** The upper bound and whether it is exclusive (`lt`). */
  readonly upper?: { readonly value: bigint; readonly exclusive: boolean };
}

/** The bounds of an integer field's rules; empty for other fields. */
export function integerBounds(rules: FieldRules | undefined): IntegerBounds {
  const type = rules?.type;
  if (type === undefined) {
    return {};
  }
  switch (type.case) {
    case "int32":
    case "int64":
    case "uint32":
    case "uint64":
    case "sint32":
    case "sint64":
    case "fixed32":
    case "fixed64":
    case "sfixed32":
    case "sfixed64": {
      const { greaterThan, lessThan } = type.value;
      return {
        ...(greaterThan.case === undefined
          ? {}
          : { lower: { value: BigInt(greaterThan.value), exclusive: greaterThan.case === "gt" } }),
        ...(lessThan.case === undefined
          ? {}
          : { upper: { value: BigInt(lessThan.value), exclusive: lessThan.case === "lt" } }),
      };
    }
    default:
      return {};
  }
}
