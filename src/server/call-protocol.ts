import type { StreamRequest, UnaryRequest } from "@connectrpc/connect";
import { restCallKey } from "../gateway/rest-call.js";

/** The wire protocol a call came in on: rest, connect, grpc or grpc-web. */
export function callProtocol(req: UnaryRequest | StreamRequest): string {
  if (req.contextValues.get(restCallKey)) {
    return "rest";
  }
  const contentType = req.header.get("content-type") ?? "";
  if (contentType.startsWith("application/grpc-web")) {
    return "grpc-web";
  }
  if (contentType.startsWith("application/grpc")) {
    return "grpc";
  }
  return "connect";
}
