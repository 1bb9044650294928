import { grpcStatusOf } from "./grpc-status-call.js";
import { newUser, signedCreate } from "./signing.js";
import { operatorHeaders, TEST_OPERATOR } from "./test-operator.js";

export interface ServiceUrls {
  /** The public listener, e.g. `http://127.0.0.1:8080`. */
  readonly publicUrl: string;
  /** The internal listener, e.g. `http://127.0.0.1:9090`. */
  readonly internalUrl: string;
}

/** What a first token's creation answered. */
export interface FirstToken {
  readonly putStatus: number;
  readonly createStatus: number;
  /** The create's JSON body: the token and its id when it was created. */
  readonly body: { token?: string; id?: string };
}

/**
 * What an operator does first with a service that was just deployed:
 * registers a new user's key on the internal listener (Connect JSON, with
 * the operator's secret, the test operator's by default) and
 * creates a named token with it over REST on the public one.
 */
export async function createFirstToken(
  urls: ServiceUrls,
  name: string,
  operatorSecret = TEST_OPERATOR.secret,
): Promise<FirstToken> {
  const user = await newUser();
  const put = await fetch(`${urls.internalUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
    method: "POST",
    headers: { "content-type": "application/json", ...operatorHeaders(operatorSecret) },
    body: JSON.stringify({ userId: user.userId, publicKey: user.publicKey }),
  });
  await put.arrayBuffer();
  const signed = await signedCreate(user, { name });
  const created = await fetch(`${urls.publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...signed, timestamp: Number(signed.timestamp) }),
  });
  const body = (await created.json()) as FirstToken["body"];
  return { putStatus: put.status, createStatus: created.status, body };
}

/** A Connect unary call to CreateToken whose protobuf body does not parse (bytes ff ff ff). */
export function sendMalformedProtobuf(publicUrl: string): Promise<Response> {
  return fetch(`${publicUrl}/perps.token.v1.TokenService/CreateToken`, {
    method: "POST",
    headers: { "content-type": "application/proto" },
    body: new Uint8Array([0xff, 0xff, 0xff]),
  });
}

/** The malformed body's message framed as one gRPC envelope. */
const MALFORMED_ENVELOPE = Uint8Array.of(0, 0, 0, 0, 3, 0xff, 0xff, 0xff);

/**
 * The `grpc-status` of a gRPC (HTTP/2) and a gRPC-Web (HTTP/1.1) call to
 * CreateToken whose message does not parse: "3" (INVALID_ARGUMENT) on both.
 */
export async function malformedProtobufGrpcStatus(
  publicUrl: string,
): Promise<{ grpc: string; grpcWeb: string }> {
  const web = await fetch(`${publicUrl}/perps.token.v1.TokenService/CreateToken`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto" },
    body: MALFORMED_ENVELOPE,
  });
  // The answer's only envelope is its trailers: "grpc-status: 3\r\ngrpc-message: …".
  const trailer = Buffer.from(await web.arrayBuffer())
    .subarray(5)
    .toString();
  const grpcWeb = /^grpc-status: *(\d+)/im.exec(trailer)?.[1] ?? `none in ${trailer}`;
  const grpc = await grpcStatusOf(
    publicUrl,
    "/perps.token.v1.TokenService/CreateToken",
    MALFORMED_ENVELOPE,
  );
  return { grpc, grpcWeb };
}
