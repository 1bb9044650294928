import { Code } from "@connectrpc/connect";
import { statusJson } from "../gateway/rest-error.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { exchangeOf } from "./exchange.js";

const MISSING_HOST = "an HTTP/1.1 request must have a Host header";

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without `Host` is answered 400. Node
 * would answer it itself, bare (the listener turns that off), so it is
 * answered here, in the service's error shape with the request id, its log
 * line and count. Returns false for any other request: HTTP/2 names the
 * authority in `:authority`, HTTP/1.0 need not name it.
 */
export function createHostGuard() {
  return (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if (
      req.headers.host !== undefined ||
      req.httpVersionMajor !== 1 ||
      req.httpVersionMinor !== 1
    ) {
      return false;
    }
    exchangeOf(req)?.answers(Code.InvalidArgument, MISSING_HOST);
    const body = statusJson(Code.InvalidArgument, MISSING_HOST);
    res.writeHead(400, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    res.end(body);
    return true;
  };
}
