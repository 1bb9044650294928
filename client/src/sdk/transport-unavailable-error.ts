/**
 * A transport that cannot run here: "grpc" without the optional peer
 * dependency @connectrpc/connect-node, or without HTTP/2 (a browser). The
 * message says what to install or use instead; no call was made.
 */
export class TransportUnavailableError extends Error {
  override readonly name = "TransportUnavailableError";
}
