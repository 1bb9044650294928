import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { requestPath } from "../../http/request-path.js";
import { rpcProtocol } from "../call-protocol.js";
import { exchangeOf } from "../exchange.js";
import { detach } from "./answer-failure.js";
import { refuseGrpc } from "./grpc-answer.js";

/** True for a request in the gRPC or gRPC-Web protocol (`application/grpc…`). */
export function isGrpcRequest(req: NodeServerRequest): boolean {
  return rpcProtocol(req.headers["content-type"]) !== "connect";
}

// A method path as protobuf names it: `/package.Service/Method`. Segments are
// short (at most 64 characters), so what is echoed in the answer and the log
// can never be a bearer token or a signature a client put in the path.
const METHOD_PATH =
  /^\/((?:[A-Za-z_][A-Za-z0-9_]{0,63}\.)*[A-Za-z_][A-Za-z0-9_]{0,63})\/([A-Za-z_][A-Za-z0-9_]{0,63})$/;

/**
 * What a gRPC server says of a method it does not serve (grpc-go's words):
 * `unknown method M for service S` when S is served here, else
 * `unknown service S`; a path that is no protobuf method name is not echoed.
 */
export function unimplementedMessage(path: string, services: ReadonlySet<string>): string {
  const match = path.length <= 256 ? METHOD_PATH.exec(path) : null;
  if (match?.[1] === undefined || match[2] === undefined) {
    return "malformed method name";
  }
  return services.has(match[1])
    ? `unknown method ${match[2]} for service ${match[1]}`
    : `unknown service ${match[1]}`;
}

// The content type of the answer: the request's family and codec, without parameters.
const CONTENT_TYPE = /^application\/grpc(?:-web(?:-text)?)?(?:\+(?:proto|json))?/;

/**
 * Answers a gRPC or gRPC-Web request for a method not served here as every
 * gRPC server does: HTTP 200 and `grpc-status` 12 (UNIMPLEMENTED) with a
 * `grpc-message` naming the method, so that gRPC clients report the code
 * rather than a transport error. gRPC puts the status in the trailers,
 * gRPC-Web in a trailer frame of the body (base64 for `grpc-web-text`), both
 * with the request id, as the service's other gRPC errors: the one gRPC
 * answer writer (grpc-answer.ts) writes it.
 */
export function answerGrpcUnimplemented(
  req: NodeServerRequest,
  res: NodeServerResponse,
  services: ReadonlySet<string>,
): void {
  const contentType = req.headers["content-type"]?.toLowerCase() ?? "";
  // The listener labels it by its protocol (the content type): no RPC of ours was named.
  const protocol = rpcProtocol(contentType) === "grpc" ? "grpc" : "grpc-web";
  const answerType = CONTENT_TYPE.exec(contentType)?.[0] ?? "application/grpc";
  detach(
    refuseGrpc(
      res,
      {
        protocol,
        contentType: answerType,
        text: answerType.startsWith("application/grpc-web-text"),
        compression: null,
        compressMinBytes: 0,
        exchange: exchangeOf(req),
      },
      new ConnectError(unimplementedMessage(requestPath(req), services), Code.Unimplemented),
    ),
  );
}
