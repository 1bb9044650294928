import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { grpcFrame } from "../grpc-frame.js";

/** The JSON body of a signed create, as bench/signed-requests.ts writes it. */
interface CreateBody {
  signature: string;
  timestamp: number;
  userId: string;
  expiresIn: number;
}

/**
 * The peer's CreateTokenRequest, gRPC-framed, for the same signed create:
 * its `expires_in` is a google.protobuf.Int64Value (field 4, a message
 * holding the value in field 1), where ours is a proto3 `optional int64`.
 * Same signed message, same field numbers otherwise.
 */
export function peerCreateFrame(json: string): Buffer {
  const body = JSON.parse(json) as CreateBody;
  const writer = new BinaryWriter();
  writer.tag(1, WireType.LengthDelimited).string(body.signature);
  writer.tag(2, WireType.Varint).int64(body.timestamp);
  writer.tag(3, WireType.LengthDelimited).string(body.userId);
  writer
    .tag(4, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.Varint)
    .int64(body.expiresIn)
    .join();
  return grpcFrame(writer.finish());
}
