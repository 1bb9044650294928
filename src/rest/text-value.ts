import { type DescEnum, protoInt64, ScalarType } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";

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
