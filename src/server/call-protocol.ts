import type { StreamRequest, UnaryRequest } from "@connectrpc/connect";
import { restCallKey } from "../rest/rest-call.js";
import { exchangeKey } from "./exchange.js";

/** The wire protocol a call came in on: rest, connect, grpc or grpc-web. */
export function callProtocol(req: UnaryRequest | StreamRequest): string {
  if (req.contextValues.get(restCallKey)) {
    return "rest";
  }
  // The listener names the protocol of every call it routes; only a call
  // made outside it (unit tests) is told by its headers, which are then made.
  const named = req.contextValues.get(exchangeKey)?.protocol;
  return named === undefined || named === "http"
    ? rpcProtocol(req.header.get("content-type"))
    : named;
}

/**
 * The protocol of a request to a Connect path, by its content type: connect,
 * grpc or grpc-web (media types are case-insensitive, as Connect matches them).
 */
export function rpcProtocol(contentType: string | null | undefined): string {
  const type = contentType?.toLowerCase();
  if (type?.startsWith("application/grpc-web")) {
    return "grpc-web";
  }
  if (type?.startsWith("application/grpc")) {
    return "grpc";
  }
  return "connect";
}
