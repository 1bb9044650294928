import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import type { JsonSchema } from "../../src/openapi/openapi-document.js";
import { fieldRules, isRequired } from "../../src/validation/validation-interceptor.js";
import type { CommentSource } from "./proto-comments.js";
import { ruleSchema } from "./rule-schema.js";

/**
 * Which way a message travels. The gateway reads requests with the strict
 * typing of src/rest/strict-json.ts (64-bit integers are JSON numbers
 * within ±(2^53−1), enums by name or number) and writes responses in
 * protobuf JSON (64-bit integers as strings, enums by name), so the two
 * schemas of one message can differ.
 */
export type Direction = "input" | "output";

/** A message or enum: the types that become component schemas. */
export type NamedType = DescMessage | DescEnum;

export interface SchemaBuilderOptions {
  /**
   * JSON Schema keywords merged over the generated schema of a field or a
   * message, keyed by full name (`pkg.Message.field_name` or `pkg.Message`).
   * A message's `required` list is added to the generated one. Default: none.
   */
  constraints?: Readonly<Record<string, JsonSchema>>;
  /** Where descriptions come from. Default: no descriptions. */
  comments?: CommentSource;
  /** Types reachable from request bodies. Default: none. */
  inputRoots?: readonly NamedType[];
  /** Types reachable from response bodies. Default: none. */
  outputRoots?: readonly NamedType[];
}

export interface SchemaBuilder {
  /** The schema of a message's JSON: a `$ref` to its component, or inline for well-known types. */
  message(desc: DescMessage, dir: Direction): JsonSchema;
  /**
   * An inline object schema of a message without some of its top-level
   * fields (a `body: "*"` whose other fields come from the path).
   */
  messageWithout(desc: DescMessage, dir: Direction, omit: ReadonlySet<DescField>): JsonSchema;
  /** The schema of a field's JSON value, with its description and constraints. */
  field(field: DescField, dir: Direction): JsonSchema;
  /** The schema of a field's value written as text in a URL path or query. */
  textField(field: DescField): JsonSchema;
  /** Every component schema referenced so far, sorted by name. */
  components(): Record<string, JsonSchema>;
}

// The strict gateway typing (src/rest/strict-json.ts): 64-bit integers
// must be exact in a JSON number.
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_FLOAT = 3.4028234663852886e38;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;
// protobuf JSON accepts standard and URL-safe base64, padded or not.
const BASE64_PATTERN = "^[A-Za-z0-9+/_-]*={0,2}$";

/**
 * Builds JSON Schemas from protobuf descriptors: camelCase JSON names,
 * required fields and the other buf.validate rules (rule-schema.ts) in requests, proto
 * comments as descriptions. A message or enum becomes one component named
 * by its full name; one used in both directions whose schema differs by
 * direction gets two, suffixed `-input` and `-output` (a `-` cannot occur
 * in a proto name, so no other type can clash).
 */
export function createSchemaBuilder(opts: SchemaBuilderOptions = {}): SchemaBuilder {
  const constraints = opts.constraints ?? {};
  const comments = opts.comments ?? (() => undefined);
  const inputTypes = reachableTypes(opts.inputRoots ?? []);
  const outputTypes = reachableTypes(opts.outputRoots ?? []);
  const schemas = new Map<string, JsonSchema>();
  const directional = new Map<string, boolean>();

  function componentName(type: NamedType, dir: Direction): string {
    const shared = inputTypes.has(type.typeName) && outputTypes.has(type.typeName);
    return shared && dependsOnDirection(type, directional)
      ? `${type.typeName}-${dir}`
      : type.typeName;
  }

  function ref(type: NamedType, dir: Direction): JsonSchema {
    const name = componentName(type, dir);
    if (!schemas.has(name)) {
      // Reserve the name first: a message may contain itself.
      schemas.set(name, {});
      schemas.set(name, type.kind === "enum" ? enumSchema(type, dir) : messageSchema(type, dir));
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  function withDoc(schema: JsonSchema, desc: DescMessage | DescEnum | DescField): JsonSchema {
    const description = comments(desc);
    return {
      ...schema,
      ...(description === undefined ? {} : { description }),
      ...(desc.deprecated ? { deprecated: true } : {}),
    };
  }

  function enumSchema(desc: DescEnum, dir: Direction): JsonSchema {
    const names = desc.values.map((v) => v.name);
    const described = desc.values
      .map((v) => [v.name, comments(v)] as const)
      .filter(([, text]) => text !== undefined)
      .map(([name, text]) => `- \`${name}\`: ${text}`);
    const schema: JsonSchema =
      dir === "output"
        ? { type: "string", enum: names }
        : {
            anyOf: [
              { type: "string", enum: names },
              { type: "integer", enum: desc.values.map((v) => v.number) },
            ],
          };
    const own = withDoc(schema, desc);
    if (described.length > 0) {
      own.description = [own.description, described.join("\n")]
        .filter((t) => t !== undefined)
        .join("\n\n");
    }
    return own;
  }

  function messageSchema(
    desc: DescMessage,
    dir: Direction,
    omit: ReadonlySet<DescField> = new Set(),
  ): JsonSchema {
    const fields = desc.fields.filter((f) => !omit.has(f));
    const properties: Record<string, JsonSchema> = {};
    for (const f of fields) {
      properties[f.jsonName] = fieldSchema(f, dir);
    }
    // "required" is a request rule; protobuf JSON output leaves default values out.
    const required =
      dir === "input"
        ? desc.fields.filter((f) => isRequired(f) && !omit.has(f)).map((f) => f.jsonName)
        : [];
    const schema: JsonSchema = { type: "object", properties };
    if (required.length > 0) {
      schema.required = required;
    }
    const oneofs = oneofRule(desc, omit);
    if (oneofs !== undefined) {
      schema.dependentSchemas = oneofs;
    }
    return merge(withDoc(schema, desc), constraints[desc.typeName]);
  }

  function fieldSchema(field: DescField, dir: Direction): JsonSchema {
    let schema: JsonSchema;
    switch (field.fieldKind) {
      case "scalar":
        schema = scalarSchema(field.scalar, dir);
        break;
      case "enum":
        schema = enumOrNull(field.enum, dir);
        break;
      case "message":
        schema = typeSchema(field.message, dir);
        break;
      case "list":
        schema = { type: "array", items: elementSchema(field, dir) };
        break;
      case "map":
        schema = {
          type: "object",
          propertyNames: mapKeySchema(field.mapKey),
          additionalProperties: elementSchema(field, dir),
        };
        break;
    }
    // The rules the service enforces on requests, then the hand-written documentation.
    const ruled = dir === "input" ? merge(schema, ruleSchema(field)) : schema;
    return merge(withDoc(ruled, field), constraints[fieldKey(field)]);
  }

  /** A list's items or a map's values: a message, an enum or a scalar. */
  function elementSchema(
    field: DescField & { fieldKind: "list" | "map" },
    dir: Direction,
  ): JsonSchema {
    if (field.message !== undefined) {
      return typeSchema(field.message, dir);
    }
    if (field.enum !== undefined) {
      return enumOrNull(field.enum, dir);
    }
    return scalarSchema(field.scalar, dir);
  }

  function enumOrNull(desc: DescEnum, dir: Direction): JsonSchema {
    return desc.typeName === "google.protobuf.NullValue" ? { type: "null" } : ref(desc, dir);
  }

  function typeSchema(desc: DescMessage, dir: Direction): JsonSchema {
    return wellKnownSchema(desc, dir) ?? ref(desc, dir);
  }

  function textField(field: DescField): JsonSchema {
    let schema: JsonSchema;
    if (field.fieldKind === "list") {
      schema = {
        type: "array",
        items:
          field.listKind === "enum"
            ? enumTextSchema(field.enum)
            : field.listKind === "scalar"
              ? scalarTextSchema(field.scalar)
              : {},
      };
    } else if (field.fieldKind === "enum") {
      schema = enumTextSchema(field.enum);
    } else if (field.fieldKind === "scalar") {
      schema = scalarTextSchema(field.scalar);
    } else {
      schema = { type: "string" };
    }
    // A parameter is part of a request: the rules the service enforces apply.
    const { description: _, ...withoutDescription } = withDoc(
      merge(schema, ruleSchema(field)),
      field,
    );
    // A parameter carries the description itself.
    return merge(withoutDescription, constraints[fieldKey(field)]);
  }

  return {
    message: typeSchema,
    messageWithout: (desc, dir, omit) => messageSchema(desc, dir, omit),
    field: fieldSchema,
    textField,
    components() {
      return Object.fromEntries([...schemas].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    },
  };
}

/** The key of a field in the constraints table: `pkg.Message.field_name`. */
export function fieldKey(field: DescField): string {
  return `${field.parent.typeName}.${field.name}`;
}

/** Constraint keywords win; a message's `required` lists are joined. */
function merge(schema: JsonSchema, extra: JsonSchema | undefined): JsonSchema {
  if (extra === undefined) {
    return schema;
  }
  const merged: JsonSchema = { ...schema, ...extra };
  if (schema.required !== undefined && extra.required !== undefined) {
    merged.required = [...new Set([...schema.required, ...extra.required])];
  }
  return merged;
}

// At most one field of a oneof may be set (the gateway refuses two): each
// member, when present, forbids the others.
function oneofRule(
  desc: DescMessage,
  omit: ReadonlySet<DescField>,
): Record<string, JsonSchema> | undefined {
  const rules: Record<string, JsonSchema> = {};
  for (const oneof of desc.oneofs) {
    const members = oneof.fields.filter((f) => !omit.has(f));
    for (const member of members) {
      const others = members.filter((f) => f !== member).map((f) => f.jsonName);
      if (others.length > 0) {
        rules[member.jsonName] = { not: { anyOf: others.map((name) => ({ required: [name] })) } };
      }
    }
  }
  return Object.keys(rules).length > 0 ? rules : undefined;
}

function scalarSchema(type: ScalarType, dir: Direction): JsonSchema {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64", pattern: BASE64_PATTERN };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const format = type === ScalarType.FLOAT ? "float" : "double";
      const finite: JsonSchema =
        type === ScalarType.FLOAT
          ? { type: "number", format, minimum: -MAX_FLOAT, maximum: MAX_FLOAT }
          : { type: "number", format };
      // protobuf JSON writes NaN and the infinities as strings; requests must be finite.
      return dir === "input"
        ? finite
        : { anyOf: [finite, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }] };
    }
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return dir === "input"
        ? { type: "integer", format: "int64", minimum: -MAX_SAFE, maximum: MAX_SAFE }
        : { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return dir === "input"
        ? { type: "integer", format: "uint64", minimum: 0, maximum: MAX_SAFE }
        : { type: "string", format: "uint64", pattern: "^[0-9]+$" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "uint32", minimum: 0, maximum: UINT32_MAX };
    default:
      return { type: "integer", format: "int32", minimum: INT32_MIN, maximum: INT32_MAX };
  }
}

// In a URL, text is parsed exactly (scalarFromText, src/rest/request-transcoder.ts), so 64-bit
// integers take their whole range, and floats also NaN and the infinities.
function scalarTextSchema(type: ScalarType): JsonSchema {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "integer", format: "int64" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "integer", format: "uint64", minimum: 0 };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number", format: type === ScalarType.FLOAT ? "float" : "double" };
    default:
      return scalarSchema(type, "input");
  }
}

function enumTextSchema(desc: DescEnum): JsonSchema {
  return {
    anyOf: [
      { type: "string", enum: desc.values.map((v) => v.name) },
      { type: "integer", enum: desc.values.map((v) => v.number) },
    ],
  };
}

function mapKeySchema(type: ScalarType): JsonSchema {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "string", enum: ["true", "false"] };
    default:
      return { type: "string", pattern: "^-?[0-9]+$" };
  }
}

/** The JSON forms protobuf gives well-known types; undefined for other messages. */
function wellKnownSchema(desc: DescMessage, dir: Direction): JsonSchema | undefined {
  if (isWrapperDesc(desc)) {
    const inner = desc.fields[0];
    return inner?.fieldKind === "scalar" ? scalarSchema(inner.scalar, dir) : undefined;
  }
  switch (desc.typeName) {
    case "google.protobuf.Any":
      return {
        type: "object",
        properties: { "@type": { type: "string" } },
        required: ["@type"],
      };
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" };
    case "google.protobuf.FieldMask":
      return { type: "string" };
    case "google.protobuf.Struct":
      return { type: "object" };
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Value":
      return {};
    default:
      return undefined;
  }
}

/** Every message and enum a set of roots reaches, by full name (well-known forms excluded). */
function reachableTypes(roots: readonly NamedType[]): Set<string> {
  const seen = new Set<string>();
  const visit = (type: NamedType) => {
    if (seen.has(type.typeName)) {
      return;
    }
    seen.add(type.typeName);
    if (type.kind === "message") {
      for (const f of type.fields) {
        if (f.enum !== undefined) visit(f.enum);
        if (f.message !== undefined) visit(f.message);
      }
    }
  };
  roots.forEach(visit);
  return seen;
}

/**
 * True when a type's input and output schemas differ: enums (numbers are
 * accepted in requests), 64-bit integers and floats, and fields with rules,
 * in the type itself or in a type it contains.
 */
function dependsOnDirection(type: NamedType, memo: Map<string, boolean>): boolean {
  const known = memo.get(type.typeName);
  if (known !== undefined) {
    return known;
  }
  if (type.kind === "enum") {
    memo.set(type.typeName, type.typeName !== "google.protobuf.NullValue");
    return memo.get(type.typeName) ?? false;
  }
  if (isWrapperDesc(type)) {
    return type.fields.some((f) => f.scalar !== undefined && isDirectionalScalar(f.scalar));
  }
  // Their JSON forms (strings, objects) are the same both ways.
  if (type.typeName.startsWith("google.protobuf.")) {
    return false;
  }
  // A type that contains itself: assume not, the other fields decide.
  memo.set(type.typeName, false);
  const result = type.fields.some((f) => {
    // Rules (required included) are written into request schemas only.
    if (fieldRules(f) !== undefined) return true;
    if (f.scalar !== undefined && isDirectionalScalar(f.scalar)) return true;
    if (f.enum !== undefined && dependsOnDirection(f.enum, memo)) return true;
    return f.message !== undefined && dependsOnDirection(f.message, memo);
  });
  memo.set(type.typeName, result);
  return result;
}

function isDirectionalScalar(type: ScalarType): boolean {
  return [
    ScalarType.INT64,
    ScalarType.SINT64,
    ScalarType.SFIXED64,
    ScalarType.UINT64,
    ScalarType.FIXED64,
    ScalarType.DOUBLE,
    ScalarType.FLOAT,
  ].includes(type);
}
