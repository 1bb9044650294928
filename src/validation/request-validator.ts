import type { DescField, DescMessage, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { createValidator, type Violation } from "@bufbuild/protovalidate";
import { violationText } from "./violation-text.js";

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
