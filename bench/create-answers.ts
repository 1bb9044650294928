// What counts as a successful create, the same for every server the bench
// measures: an answer that carries a token.
const TOKEN_FIELD = Buffer.from('"token":"');

/** A REST create: `201` with a token in the JSON body (this service and the Go peer). */
export const restCreated = (status: number, body: Buffer): boolean =>
  status === 201 && body.includes(TOKEN_FIELD);

/** Any 2xx JSON answer with a token (Connect's 200, the floor server's 200). */
export const answeredWithToken = (status: number, body: Buffer): boolean =>
  status >= 200 && status < 300 && body.includes(TOKEN_FIELD);

/** A gRPC create: `grpc-status: 0` (checked by the raw client) after a non-empty message. */
export const grpcCreated = (messageLength: number): boolean => messageLength > 0;
