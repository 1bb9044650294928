import type { DescField, DescMessage } from "@bufbuild/protobuf";

/**
 * Resolves a dotted field path ("item.id") on a message. Names match the
 * proto field name, and the JSON name too when `allowJsonNames` is set (query
 * parameters). Returns undefined when a part does not resolve. Parts may go
 * through repeated and map message fields, so callers can tell "no such
 * field" from "not bindable" (see isBindablePath).
 */
export function resolveFieldPath(
  message: DescMessage,
  path: readonly string[],
  allowJsonNames = false,
): DescField[] | undefined {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path) {
    if (current === undefined) {
      return undefined;
    }
    const field: DescField | undefined = current.fields.find(
      (f) => f.name === name || (allowJsonNames && f.jsonName === name),
    );
    if (field === undefined) {
      return undefined;
    }
    fields.push(field);
    current = field.message;
  }
  return fields;
}

/**
 * True when every part but the last is a singular message field, and the
 * last a singular scalar or enum (or, with `allowRepeatedLeaf`, a repeated
 * one): what a path variable or a query parameter can set from text.
 */
export function isBindablePath(fields: readonly DescField[], allowRepeatedLeaf: boolean): boolean {
  const leaf = fields[fields.length - 1];
  if (leaf === undefined) {
    return false;
  }
  const leafOk =
    leaf.fieldKind === "scalar" ||
    leaf.fieldKind === "enum" ||
    (allowRepeatedLeaf && leaf.fieldKind === "list" && leaf.listKind !== "message");
  // Well-known types have their own JSON forms; they are not set part by part.
  return (
    leafOk &&
    fields
      .slice(0, -1)
      .every((f) => f.fieldKind === "message" && !f.message.typeName.startsWith("google.protobuf."))
  );
}
