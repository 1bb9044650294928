import { type DescField, type DescMessage, getOption, type JsonValue } from "@bufbuild/protobuf";
import { FieldBehavior, field_behavior } from "../gen/google/api/field_behavior_pb.js";
import { invalidArgument } from "./rest-error.js";
import type { RestRoute } from "./rest-route.js";

const requiredByMessage = new WeakMap<DescMessage, readonly DescField[]>();

/** Top-level fields marked `(google.api.field_behavior) = REQUIRED`. */
export function requiredFields(desc: DescMessage): readonly DescField[] {
  let fields = requiredByMessage.get(desc);
  if (fields === undefined) {
    fields = desc.fields.filter((f) =>
      getOption(f, field_behavior).includes(FieldBehavior.REQUIRED),
    );
    requiredByMessage.set(desc, fields);
  }
  return fields;
}

function has(json: JsonValue | undefined, field: DescField): boolean {
  return (
    typeof json === "object" &&
    json !== null &&
    !Array.isArray(json) &&
    (Object.hasOwn(json, field.jsonName) || Object.hasOwn(json, field.name))
  );
}

/**
 * Refuses a REST request that leaves out a REQUIRED field. Proto3 cannot tell
 * a missing `timestamp` from 0, so without this a forgotten field would be
 * answered as if it were wrong (e.g. "Signature expired") instead of missing.
 * A field counts as given when the body, a path variable or a query parameter
 * carries it.
 */
export function checkRequiredFields(
  route: RestRoute,
  body: JsonValue | undefined,
  query: URLSearchParams,
): void {
  for (const field of requiredFields(route.method.input)) {
    const given =
      (route.body.kind === "all" && has(body, field)) ||
      (route.body.kind === "field" && route.body.field === field && body !== undefined) ||
      route.pathFields.some((path) => path[0] === field) ||
      // With body "*" the query binds nothing.
      (route.body.kind !== "all" && (query.has(field.jsonName) || query.has(field.name)));
    if (!given) {
      throw invalidArgument(`${field.jsonName}: is required`);
    }
  }
}
