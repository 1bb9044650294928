import type { StreamRequest, UnaryRequest } from "@connectrpc/connect";
import { restCallKey } from "../gateway/rest-call.js";

/** The wire protocol a call came in on: rest, connect, grpc or grpc-web. */
export function callProtocol(req: UnaryRequest | StreamRequest): string {
  if (req.contextValues.get(restCallKey)) {
    return "rest";
  }
  return rpcProtocol(req.header.get("content-type"));
}

/** The protocol of a request to a Connect path, by its content type: connect, grpc or grpc-web. */
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
