import { create, toBinary } from "@bufbuild/protobuf";
import { PutUserKeyRequestSchema } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import type { BenchUser } from "../bench-users.js";
import { grpcFrame } from "../grpc-frame.js";
import { connectRawGrpc } from "../raw-grpc-client.js";

const PUT_USER_KEY = "/perps.token.v1.UserKeyService/PutUserKey";

/**
 * Registers every user's public key with the peer through its gRPC
 * UserKeyService.PutUserKey (the peer serves it over gRPC only; same field
 * numbers as ours), 50 calls in flight.
 */
export async function registerPeerUsers(grpcAddress: string, users: readonly BenchUser[]) {
  const client = await connectRawGrpc({ address: grpcAddress, path: PUT_USER_KEY, connections: 1 });
  try {
    for (let i = 0; i < users.length; i += 50) {
      await Promise.all(
        users.slice(i, i + 50).map(
          (user) =>
            new Promise<void>((resolve, reject) => {
              const message = create(PutUserKeyRequestSchema, {
                userId: user.userId,
                publicKey: user.publicKeyHex,
              });
              client.call(grpcFrame(toBinary(PutUserKeyRequestSchema, message)), (failure) =>
                failure === undefined
                  ? resolve()
                  : reject(new Error(`peer PutUserKey failed: ${failure}`)),
              );
            }),
        ),
      );
    }
  } finally {
    client.close();
  }
}
