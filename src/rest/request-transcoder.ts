// A REST request to its request message, per google/api/http.proto: the
// JSON body (held to strict-json.ts's rules), then the query parameters, then
// the path variables, each parameter and variable parsed from its text into
// its field's type (scalarFromText, enumFromText).

import {
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  protoInt64,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { isBindablePath, resolveFieldPath } from "./field-path.js";
import { type BoundVariable, decodeVariable } from "./path-template.js";
import { invalidArgument } from "./rest-error.js";
import type { RestRoute } from "./rest-route.js";
import { checkStrictJson, StrictJsonError } from "./strict-json.js";

/** The parts of an HTTP request that make up the request message. */
export interface RestRequestParts {
  /** Parsed JSON body; undefined when the route takes no body. */
  readonly body: JsonValue | undefined;
  readonly variables: readonly BoundVariable[];
  readonly query: URLSearchParams;
}

/**
 * Builds the request message of a route per http.proto: the body first, then
 * query parameters for the fields neither in the body nor in the path, then
 * the path variables, which win over anything else. Throws a 400 RestError.
 */
export function transcodeRequest(route: RestRoute, parts: RestRequestParts): Message {
  const input = route.method.input;
  const message = messageFromBody(input, route, parts.body);
  const r = reflect(input, message);
  if (route.body.kind !== "all") {
    const bodyField = route.body.kind === "field" ? route.body.field : undefined;
    applyQuery(r, parts.query, bodyField);
  }
  route.pathFields.forEach((fields, i) => {
    const variable = parts.variables[i];
    if (variable === undefined) {
      return;
    }
    const name = variable.fieldPath.join(".");
    let text: string;
    try {
      text = decodeVariable(variable);
    } catch {
      throw invalidArgument(`${name}: invalid percent-encoding in the URL path`);
    }
    setFromText(r, fields, [text], name);
  });
  return message;
}

function messageFromBody(input: DescMessage, route: RestRoute, body: JsonValue | undefined) {
  // body: "<field>" is checked as the value of that field, so errors name it.
  const json =
    route.body.kind === "all"
      ? body
      : route.body.kind === "field" && body !== undefined
        ? { [route.body.field.jsonName]: body }
        : {};
  if (json === undefined) {
    throw invalidArgument("request body must be a JSON object");
  }
  try {
    checkStrictJson(input, json);
  } catch (e) {
    if (e instanceof StrictJsonError) {
      throw invalidArgument(e.message);
    }
    throw e;
  }
  try {
    return fromJson(input, json, { ignoreUnknownFields: true });
  } catch {
    // checkStrictJson leaves little to fail here (e.g. a too deep Value).
    throw invalidArgument(`request body is not a valid ${input.name}`);
  }
}

function applyQuery(r: ReflectMessage, query: URLSearchParams, bodyField: DescField | undefined) {
  for (const name of new Set(query.keys())) {
    const fields = resolveFieldPath(r.desc, name.split("."), true);
    // Unknown parameters are ignored, like unknown JSON fields; so are the
    // fields the body carries.
    if (fields === undefined || fields[0] === bodyField) {
      continue;
    }
    setFromText(r, fields, query.getAll(name), name);
  }
}

/**
 * Sets the field at the end of `fields` from text, creating the messages on
 * the way: a singular scalar/enum from one value, a repeated one from any
 * number of values.
 */
function setFromText(
  root: ReflectMessage,
  fields: readonly DescField[],
  texts: string[],
  name: string,
) {
  const leaf = fields[fields.length - 1];
  if (leaf === undefined || !isBindablePath(fields, true)) {
    throw invalidArgument(`${name}: cannot be set from a URL`);
  }
  let target = root;
  const chain: [ReflectMessage, DescField, ReflectMessage][] = [];
  for (const field of fields.slice(0, -1)) {
    if (field.fieldKind !== "message") {
      throw invalidArgument(`${name}: cannot be set from a URL`);
    }
    const child = target.isSet(field) ? target.get(field) : reflect(field.message);
    chain.push([target, field, child]);
    target = child;
  }
  try {
    if (leaf.oneof !== undefined) {
      const other = target.oneofCase(leaf.oneof);
      if (other !== undefined && other !== leaf) {
        throw new TextValueError(`only one of the fields of ${leaf.oneof.name} may be set`);
      }
    }
    if (leaf.fieldKind === "list") {
      const list = target.get(leaf);
      for (const text of texts) {
        list.add(valueFromText(leaf, text));
      }
    } else {
      const [text, ...more] = texts;
      if (text === undefined || more.length > 0) {
        throw new TextValueError("must be given once");
      }
      target.set(leaf, valueFromText(leaf, text));
    }
  } catch (e) {
    if (e instanceof TextValueError) {
      throw invalidArgument(`${name}: ${e.message}`);
    }
    throw e;
  }
  // Attach the created messages only now that the leaf is set.
  for (const [parent, field, child] of chain.reverse()) {
    parent.set(field, child);
  }
}

function valueFromText(field: DescField, text: string): unknown {
  if (field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum")) {
    return enumFromText(field.enum, text);
  }
  if (field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar")) {
    return scalarFromText(field.scalar, text);
  }
  throw new TextValueError("cannot be set from a URL");
}

/** Text of a path variable or query parameter that does not fit its field. */
export class TextValueError extends Error {
  override readonly name = "TextValueError";
}

const integerRe = /^-?[0-9]+$/;
const floatRe = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;
const base64Re = /^[A-Za-z0-9+/\-_]*={0,2}$/;
const maxFloat = 3.4028234663852886e38;

/**
 * Parses the text of a path variable or query parameter into a scalar field
 * value as protobuf-es holds it (bigint for 64-bit integers). Integers in
 * text are exact, so 64-bit fields take their whole range here.
 */
export function scalarFromText(type: ScalarType, text: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      return text;
    case ScalarType.BOOL:
      if (text === "true") return true;
      if (text === "false") return false;
      throw new TextValueError("must be true or false");
    case ScalarType.BYTES:
      if (!base64Re.test(text)) throw new TextValueError("must be base64");
      return base64Decode(text);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return floatFromText(type, text);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return bigIntFromText(text, -(2n ** 63n), 2n ** 63n - 1n, protoInt64.parse);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return bigIntFromText(text, 0n, 2n ** 64n - 1n, protoInt64.uParse);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return intFromText(text, 0, 2 ** 32 - 1);
    default:
      return intFromText(text, -(2 ** 31), 2 ** 31 - 1);
  }
}

/** Parses an enum value given by name or by number; only known values. */
export function enumFromText(desc: DescEnum, text: string): number {
  const value = integerRe.test(text)
    ? desc.values.find((v) => v.number === Number(text))
    : desc.values.find((v) => v.name === text);
  if (value === undefined) {
    throw new TextValueError(`must be one of ${desc.values.map((v) => v.name).join(", ")}`);
  }
  return value.number;
}

function intFromText(text: string, min: number, max: number): number {
  const n = integerRe.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new TextValueError(`must be an integer from ${min} to ${max}`);
  }
  return n;
}

function bigIntFromText(
  text: string,
  min: bigint,
  max: bigint,
  parse: (text: string) => bigint | string,
): bigint | string {
  const n = integerRe.test(text) ? BigInt(text) : undefined;
  if (n === undefined || n < min || n > max) {
    throw new TextValueError(`must be an integer from ${min} to ${max}`);
  }
  return parse(n.toString());
}

function floatFromText(type: ScalarType, text: string): number {
  if (text === "NaN") return Number.NaN;
  if (text === "Infinity") return Number.POSITIVE_INFINITY;
  if (text === "-Infinity") return Number.NEGATIVE_INFINITY;
  const n = floatRe.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(n) || (type === ScalarType.FLOAT && Math.abs(n) > maxFloat)) {
    throw new TextValueError("must be a number");
  }
  return n;
}
