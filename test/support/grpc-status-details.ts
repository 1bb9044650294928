import assert from "node:assert/strict";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceError } from "@grpc/grpc-js";

/**
 * The details of a gRPC error: `grpc-status-details-bin` is a google.rpc.Status
 * (1 code, 2 message, 3 repeated Any), read field by field here.
 */
export function grpcStatusDetails(err: ServiceError) {
  const [bin] = err.metadata.get("grpc-status-details-bin");
  assert.ok(bin instanceof Buffer, "grpc-status-details-bin is missing");
  const reader = new BinaryReader(bin);
  const status = {
    code: 0,
    message: "",
    details: [] as ReturnType<typeof fromBinary<typeof AnySchema>>[],
  };
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (no === 1) {
      status.code = reader.int32();
    } else if (no === 2) {
      status.message = reader.string();
    } else if (no === 3) {
      status.details.push(fromBinary(AnySchema, reader.bytes()));
    } else {
      reader.skip(wireType);
    }
  }
  return status;
}
