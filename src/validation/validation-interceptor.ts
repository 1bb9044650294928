// Where a request is checked: every unary request, whichever protocol carried
// it, against the buf.validate rules of its proto (validationInterceptor), by
// the protovalidate runtime (createRequestValidator) in the service's own
// wording of each broken rule (violationText). The reading of a field's rules
// at the end is the OpenAPI generator's too (scripts/openapi/), so that the
// document states the rules this check enforces.

import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  isFieldSet,
  type Message,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { createValidator, type Violation } from "@bufbuild/protovalidate";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  type FieldRules,
  field as fieldRulesOption,
  StringRulesSchema,
} from "@perps/token-client/contract/buf/validate/validate_pb.js";
import { pattern_message } from "@perps/token-client/contract/perps/api/v1/field_rules_pb.js";

export interface ValidationInterceptorOptions {
  /** The validator. Default: `createRequestValidator()`. */
  validator?: RequestValidator;
}

/**
 * Checks every unary request against the buf.validate rules of its proto
 * before the implementation sees it, whichever protocol carried it (Connect,
 * gRPC, gRPC-Web, the lean gRPC path and the REST gateway share the
 * interceptors): INVALID_ARGUMENT naming every wrong field, joined by "; ".
 */
export function validationInterceptor(opts: ValidationInterceptorOptions = {}): Interceptor {
  const validator = opts.validator ?? createRequestValidator();
  return (next) => async (req) => {
    if (!req.stream) {
      const problems = validator.problems(req.method.input, req.message);
      if (problems.length > 0) {
        throw new ConnectError(problems.join("; "), Code.InvalidArgument);
      }
    }
    return next(req);
  };
}

export interface RequestValidator {
  /**
   * What is wrong with a request by the buf.validate rules of its proto:
   * one "<jsonName>: <why>" per wrong field, in field order; empty when it
   * is valid. Throws when a rule cannot be evaluated (a bug in the protos).
   */
  problems(schema: DescMessage, message: Message): string[];
}

/**
 * Patterns come from our own protos, never from a request, and each must
 * mean the same in the OpenAPI document (ECMAScript regular expressions, as
 * JSON Schema has them): so they run as RegExp ("u": code points, like RE2),
 * which also costs a tenth of the runtime's RE2 engine
 * (bench/validator-cost.ts).
 */
function nativeRegexMatcher(): (pattern: string, against: string) => boolean {
  const compiled = new Map<string, RegExp>();
  return (pattern, against) => {
    let re = compiled.get(pattern);
    if (re === undefined) {
      re = new RegExp(pattern, "u");
      compiled.set(pattern, re);
    }
    return re.test(against);
  };
}

/** The protovalidate runtime over the rules of the protos, with the service's wording. */
export function createRequestValidator(): RequestValidator {
  const validator = createValidator({ regexMatch: nativeRegexMatcher() });
  return {
    problems(schema, message) {
      const result = validator.validate(schema, message);
      if (result.kind === "valid") {
        return [];
      }
      if (result.kind === "error") {
        throw result.error;
      }
      // One problem per field: the first rule it breaks tells the client enough.
      const byField = new Map<string, string>();
      for (const violation of result.violations) {
        const path = jsonPath(violation);
        if (!byField.has(path)) {
          byField.set(path, describe(violation, message));
        }
      }
      return [...byField].map(([path, text]) => (path === "" ? text : `${path}: ${text}`));
    },
  };
}

/** The violated field's path by JSON names: `a.b[0]["k"]`; "" for a message rule. */
function jsonPath(violation: Violation): string {
  let path = "";
  for (const item of violation.field) {
    switch (item.kind) {
      case "field":
        path = path === "" ? item.jsonName : `${path}.${item.jsonName}`;
        break;
      case "list_sub":
        path += `[${item.index}]`;
        break;
      case "map_sub":
        path += `[${JSON.stringify(String(item.key))}]`;
        break;
      default:
        break;
    }
  }
  return path;
}

function describe(violation: Violation, root: Message): string {
  const last = violation.field[violation.field.length - 1];
  if (last?.kind !== "field" || violation.field.length !== 1) {
    return violation.message;
  }
  return violationText(violation, last, fieldValue(root, last));
}

function fieldValue(message: Message, field: DescField): unknown {
  const r = reflect(field.parent, message);
  return r.isSet(field) ? r.get(field) : undefined;
}

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

/** The field's `(buf.validate.field)` rules; undefined when it has none. */
export function fieldRules(f: DescField): FieldRules | undefined {
  return hasOption(f, fieldRulesOption) ? getOption(f, fieldRulesOption) : undefined;
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
