import { type DescMessage, equals, fromBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";

// gRPC with raw bytes

export interface GrpcAnswer {
  code: grpc.status;
  details: string;
}

/** One unary call whose request message is the given bytes, unparsed. */
export function rawUnary(
  client: grpc.Client,
  path: string,
  message: Uint8Array,
): Promise<GrpcAnswer> {
  const identity = (b: Buffer) => b;
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      path,
      identity,
      identity,
      Buffer.from(message),
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err) => {
        resolve(err === null ? { code: grpc.status.OK, details: "" } : err);
      },
    );
  });
}

export const SERVER_SIDE_CODES = new Set([
  grpc.status.INTERNAL,
  grpc.status.UNKNOWN,
  grpc.status.DATA_LOSS,
  grpc.status.UNAVAILABLE,
]);

export const CLIENT_SIDE_CODES = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNAUTHENTICATED,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.FAILED_PRECONDITION,
]);

export function grpcContext(target: string, message: Uint8Array, answer: GrpcAnswer): string {
  const code = grpc.status[answer.code] ?? String(answer.code);
  return `${target} with ${Buffer.from(message).toString("hex").slice(0, 400)} → ${code} ${JSON.stringify(answer.details)}`;
}

export type ByteMutation =
  | { kind: "flip"; at: number; mask: number }
  | { kind: "set"; at: number; value: number }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "remove"; at: number; length: number }
  | { kind: "repeat" };

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip"), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant("set"),
    at: fc.nat(),
    value: fc.constantFrom(0x00, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12, 0x1a, 0x22, 0x0f, 0x0e),
  }),
  fc.record({ kind: fc.constant("truncate"), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert"),
    at: fc.nat(),
    bytes: fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 12 }),
      fc.constantFrom(
        Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
        Uint8Array.of(0x12, 0xff, 0xff, 0xff, 0xff, 0x0f),
        Uint8Array.of(0x0b),
        Uint8Array.of(0x0c),
        Uint8Array.of(0x2a, 0x02, 0xed, 0xa0),
      ),
    ),
  }),
  fc.record({ kind: fc.constant("remove"), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant("repeat") }),
);

export function applyByteMutation(bytes: Uint8Array, m: ByteMutation): Uint8Array {
  const buf = Buffer.from(bytes);
  if (m.kind === "repeat") {
    return Buffer.concat([buf, buf]);
  }
  const at = m.at % (m.kind === "insert" ? buf.length + 1 : Math.max(buf.length, 1));
  switch (m.kind) {
    case "flip":
    case "set":
      if (at < buf.length) {
        const old = buf[at] ?? 0;
        buf[at] = m.kind === "flip" ? old ^ m.mask : m.value;
      }
      return buf;
    case "truncate":
      return buf.subarray(0, at);
    case "insert":
      return Buffer.concat([buf.subarray(0, at), m.bytes, buf.subarray(at)]);
    case "remove":
      return Buffer.concat([buf.subarray(0, at), buf.subarray(at + m.length)]);
  }
}

/** Does `bytes` decode to exactly `original` (so the call must succeed)? */
export function decodesTo<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
  original: Uint8Array,
): boolean {
  try {
    return equals(schema, fromBinary(schema, bytes), fromBinary(schema, original));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
