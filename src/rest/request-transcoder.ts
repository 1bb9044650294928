import {
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { isBindablePath, resolveFieldPath } from "./field-path.js";
import { type BoundVariable, decodeVariable } from "./path-template.js";
import { invalidArgument } from "./rest-error.js";
import type { RestRoute } from "./rest-route.js";
import { checkStrictJson, StrictJsonError } from "./strict-json.js";
import { enumFromText, scalarFromText, TextValueError } from "./text-value.js";

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
