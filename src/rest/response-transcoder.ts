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
  // A copy holding only this field, in protobuf JSON as the rest of the
  // answer (the defaults of nested messages left out); the field itself
  // always has a value: its default when unset ([] for an empty list, 0, "").
  const only = reflect(output);
  if (value.isSet(field)) {
    only.set(field, value.get(field));
  }
  return (
    fieldOf(toJson(output, only.message), field.jsonName) ??
    fieldOf(toJson(output, create(output), { alwaysEmitImplicit: true }), field.jsonName) ??
    null
  );
}

function fieldOf(json: JsonValue, name: string): JsonValue | undefined {
  return typeof json === "object" && json !== null && !Array.isArray(json) ? json[name] : undefined;
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
