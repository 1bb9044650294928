// A live token's check answers, encoded once per cached record.
// Tested by test/integration/check-lane-parity.test.ts.
import { toBinary } from "@bufbuild/protobuf";
import { IntrospectTokenResponseSchema } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { introspectionAnswer } from "../token/token-introspection-service.js";

/** What a live token's check answers, encoded once and kept beside its cached record. */
export interface LiveAnswers {
  /** IntrospectTokenResponse in its gRPC envelope. */
  readonly grpc: Uint8Array;
  /** The `/auth` answer's head, as `writeHead` takes it (name, value, name, value…). */
  readonly auth: string[];
}

/** A live token's identity, as its answers carry it. */
export interface LiveIdentity {
  readonly userId: string;
  readonly tokenId: string;
  /** "" for a session token. */
  readonly name: string;
  readonly expiresAtMs: number;
}

/** A message in its gRPC envelope: no flags (uncompressed), its length, its bytes. */
function envelope(message: Uint8Array): Uint8Array {
  const bytes = Buffer.alloc(5 + message.length);
  bytes.writeUInt32BE(message.length, 1);
  bytes.set(message, 5);
  return bytes;
}

/**
 * The answers of a live token, the same bytes as the pipeline's
 * (token-introspection-service.ts, forward-auth-endpoint.ts): the parity
 * test holds them to it.
 */
export function liveAnswers(identity: LiveIdentity): LiveAnswers {
  return {
    grpc: envelope(toBinary(IntrospectTokenResponseSchema, introspectionAnswer(identity))),
    auth: [
      "x-user-id",
      identity.userId,
      "x-token-id",
      identity.tokenId,
      "cache-control",
      "no-store",
      "content-length",
      "0",
    ],
  };
}
