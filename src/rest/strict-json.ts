import {
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";

/** A JSON value that does not fit the message; the message names the field by its JSON name. */
export class StrictJsonError extends Error {
  override readonly name = "StrictJsonError";
}

const maxSafe = Number.MAX_SAFE_INTEGER;
const int32: Bounds = [-(2 ** 31), 2 ** 31 - 1];
const uint32: Bounds = [0, 2 ** 32 - 1];
// 64-bit integers are limited to what a JSON number holds exactly.
const int64: Bounds = [-maxSafe, maxSafe];
const uint64: Bounds = [0, maxSafe];
const maxFloat = 3.4028234663852886e38;
const base64Re = /^[A-Za-z0-9+/\-_]*={0,2}$/;
// A string with one has no UTF-8 form (a JSON escape such as "\ud800" makes one).
const LONE_SURROGATE = /\p{Cs}/u;

type Bounds = readonly [number, number];

/**
 * Checks a JSON value against a message type more strictly than protobuf
 * JSON: integers must be integer JSON numbers within ±(2^53−1) (or the
 * 32-bit range), never strings; strings, bools, enums and bytes must have
 * their JSON type; null is only accepted where google.protobuf.Value allows
 * it. Unknown fields are ignored. Throws StrictJsonError naming every wrong
 * field of a message (the first wrong item of a list or map), joined by "; ".
 *
 * A value that passes can be converted with `fromJson(desc, json,
 * { ignoreUnknownFields: true })` without loss.
 */
export function checkStrictJson(desc: DescMessage, json: JsonValue): void {
  checkMessage(desc, json, "");
}

function fail(path: string, why: string): never {
  throw new StrictJsonError(path === "" ? `request body ${why}` : `${path}: ${why}`);
}

function isObject(v: JsonValue): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const fieldsByName = new WeakMap<DescMessage, Map<string, DescField>>();

// protobuf JSON accepts the JSON name and the proto name of a field.
function fieldsOf(desc: DescMessage): Map<string, DescField> {
  let map = fieldsByName.get(desc);
  if (map === undefined) {
    map = new Map();
    for (const f of desc.fields) {
      map.set(f.name, f);
      map.set(f.jsonName, f);
    }
    fieldsByName.set(desc, map);
  }
  return map;
}

function checkMessage(desc: DescMessage, value: JsonValue, path: string): void {
  if (isWrapperDesc(desc)) {
    const inner = desc.fields[0];
    checkScalar(inner.scalar, value, path);
    return;
  }
  switch (desc.typeName) {
    case "google.protobuf.Value":
      return;
    case "google.protobuf.ListValue":
      if (!Array.isArray(value)) fail(path, "must be a JSON array");
      return;
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
    case "google.protobuf.FieldMask":
      if (typeof value !== "string") fail(path, "must be a JSON string");
      checkWithProtobuf(desc, value, path, `must be a valid ${desc.name}`);
      return;
    case "google.protobuf.Any":
      if (!isObject(value)) fail(path, "must be a JSON object");
      checkWithProtobuf(desc, value, path, "must be a valid Any");
      return;
  }
  if (!isObject(value)) {
    fail(path, "must be a JSON object");
  }
  if (desc.typeName === "google.protobuf.Struct") {
    return;
  }
  const fields = fieldsOf(desc);
  const oneofs = new Map<string, string>();
  // Every wrong field is named, not only the first.
  const problems: string[] = [];
  // Object.entries reads own keys only, so "__proto__" is an ordinary unknown key.
  for (const [key, v] of Object.entries(value)) {
    const field = fields.get(key);
    if (field === undefined) {
      continue;
    }
    const fieldPath = path === "" ? field.jsonName : `${path}.${field.jsonName}`;
    try {
      if (field.oneof !== undefined) {
        const other = oneofs.get(field.oneof.name);
        if (other !== undefined && other !== field.jsonName) {
          fail(fieldPath, `only one of the fields of ${field.oneof.name} may be set (${other} is)`);
        }
        oneofs.set(field.oneof.name, field.jsonName);
      }
      checkField(field, v, fieldPath);
    } catch (e) {
      if (!(e instanceof StrictJsonError)) {
        throw e;
      }
      problems.push(e.message);
    }
  }
  if (problems.length > 0) {
    throw new StrictJsonError(problems.join("; "));
  }
}

function checkField(field: DescField, value: JsonValue, path: string): void {
  switch (field.fieldKind) {
    case "scalar":
      checkScalar(field.scalar, value, path);
      return;
    case "enum":
      checkEnum(field.enum, value, path);
      return;
    case "message":
      checkMessage(field.message, value, path);
      return;
    case "list":
      if (!Array.isArray(value)) fail(path, "must be a JSON array");
      value.forEach((item, i) => {
        const itemPath = `${path}[${i}]`;
        if (field.listKind === "scalar") checkScalar(field.scalar, item, itemPath);
        else if (field.listKind === "enum") checkEnum(field.enum, item, itemPath);
        else checkMessage(field.message, item, itemPath);
      });
      return;
    case "map":
      if (!isObject(value)) fail(path, "must be a JSON object");
      for (const [key, item] of Object.entries(value)) {
        const itemPath = `${path}[${JSON.stringify(key)}]`;
        checkMapKey(field.mapKey, key, itemPath);
        if (field.mapKind === "scalar") checkScalar(field.scalar, item, itemPath);
        else if (field.mapKind === "enum") checkEnum(field.enum, item, itemPath);
        else checkMessage(field.message, item, itemPath);
      }
      return;
  }
}

function checkScalar(type: ScalarType, value: JsonValue, path: string): void {
  switch (type) {
    case ScalarType.STRING:
      if (typeof value !== "string") fail(path, "must be a JSON string");
      // fromJson refuses these too, but without naming the field.
      if (LONE_SURROGATE.test(value)) fail(path, "must not contain unpaired surrogates");
      return;
    case ScalarType.BOOL:
      if (typeof value !== "boolean") fail(path, "must be a JSON boolean");
      return;
    case ScalarType.BYTES:
      if (typeof value !== "string" || !base64Re.test(value)) {
        fail(path, "must be a base64 JSON string");
      }
      return;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // JSON.parse turns 1e400 into Infinity, which no client meant.
      if (typeof value !== "number" || !Number.isFinite(value)) {
        fail(path, "must be a finite JSON number");
      }
      if (type === ScalarType.FLOAT && Math.abs(value) > maxFloat) {
        fail(path, "is out of the range of a 32-bit float");
      }
      return;
    default:
      checkInteger(integerBounds(type), value, path);
      return;
  }
}

function integerBounds(type: ScalarType): Bounds {
  switch (type) {
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return int32;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return uint32;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return uint64;
    default:
      return int64;
  }
}

function checkInteger([min, max]: Bounds, value: JsonValue, path: string): void {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    fail(path, "must be an integer JSON number");
  }
  if (value < min || value > max) {
    fail(path, `must be an integer JSON number from ${min} to ${max}`);
  }
}

function checkEnum(desc: DescEnum, value: JsonValue, path: string): void {
  if (value === null && desc.typeName === "google.protobuf.NullValue") {
    return;
  }
  const known =
    typeof value === "string"
      ? desc.values.some((v) => v.name === value)
      : typeof value === "number" && desc.values.some((v) => v.number === value);
  if (!known) {
    fail(path, `must be one of ${desc.values.map((v) => v.name).join(", ")}`);
  }
}

function checkMapKey(type: ScalarType, key: string, path: string): void {
  switch (type) {
    case ScalarType.STRING:
      return;
    case ScalarType.BOOL:
      if (key !== "true" && key !== "false") fail(path, "map key must be true or false");
      return;
    default: {
      const [min, max] = integerBounds(type);
      const n = /^-?[0-9]+$/.test(key) ? Number(key) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        fail(path, `map key must be an integer from ${min} to ${max}`);
      }
    }
  }
}

// Timestamp, Duration, FieldMask and Any have formats protobuf-es parses
// itself; its error text names internal types, so only ours is shown.
function checkWithProtobuf(desc: DescMessage, value: JsonValue, path: string, why: string): void {
  try {
    fromJson(desc, value);
  } catch {
    fail(path, why);
  }
}
