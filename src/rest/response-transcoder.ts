import { create, type DescMessage, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { RestRoute } from "./rest-route.js";

/**
 * The JSON body of a successful call: the response message in protobuf JSON
 * (camelCase names, default values omitted, 64-bit integers as strings, but
 * the message's own lists and maps always present, see withEmptyCollections),
 * or only its `response_body` field.
 */
export function transcodeResponse(route: RestRoute, message: Message): JsonValue {
  const output = route.method.output;
  const field = route.responseBody;
  if (field === undefined) {
    return withEmptyCollections(output, toJson(output, message));
  }
  const value = reflect(output, message);
  if (field.fieldKind === "message") {
    const inner = value.isSet(field) ? value.get(field).message : create(field.message);
    return toJson(field.message, inner);
  }
  // Serialize a copy holding only this field, with its default emitted, so
  // the body always has a value ([] for an empty list, 0 for zero, ...).
  const only = reflect(output);
  if (value.isSet(field)) {
    only.set(field, value.get(field));
  }
  const json = toJson(output, only.message, { alwaysEmitImplicit: true });
  const fieldJson =
    typeof json === "object" && json !== null && !Array.isArray(json)
      ? json[field.jsonName]
      : undefined;
  return fieldJson ?? null;
}

/**
 * Writes the response message's empty lists as `[]` and empty maps as `{}`,
 * which protobuf JSON leaves out, so that a list answer always has its list
 * (`{"tokens": []}`). Only the top level: nested messages, and scalars, keep
 * protobuf JSON's omissions.
 */
function withEmptyCollections(output: DescMessage, json: JsonValue): JsonValue {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return json;
  }
  for (const field of output.fields) {
    if (field.fieldKind === "list" && json[field.jsonName] === undefined) {
      json[field.jsonName] = [];
    } else if (field.fieldKind === "map" && json[field.jsonName] === undefined) {
      json[field.jsonName] = {};
    }
  }
  return json;
}
