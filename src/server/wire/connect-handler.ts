import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createConnectRouter,
  createServiceImplSpec,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { CallGate } from "../../admin-auth/call-gate.js";
import type {
  NodeHandler,
  NodeServerRequest,
  NodeServerResponse,
} from "../../http/node-handler.js";
import { requestPath } from "../../http/request-path.js";
import { requestAuthority } from "../../http/request-url.js";
import { type Exchange, exchangeOf } from "../exchange.js";
import { failAnswer } from "./answer-failure.js";
import { serveConnectUnary } from "./connect-unary.js";
import { type StreamRoute, takeGrpcStream } from "./grpc-stream-unary.js";
import { grpcFraming, refuseGrpcStream, serveGrpcUnary } from "./grpc-unary.js";
import { answerGrpcUnimplemented, isGrpcRequest } from "./grpc-unimplemented.js";
import { streamInputInterceptor } from "./input-error.js";
import { createUnaryServing, type UnaryService } from "./unary-method.js";

export interface ConnectHandlerOptions {
  /** Registers the services served. */
  routes: (router: ConnectRouter) => void;
  /** Interceptors, outermost first. */
  interceptors: Interceptor[];
  /** Largest request message accepted, in bytes. */
  readMaxBytes: number;
  /** Answers requests whose path is not an RPC of the services. */
  fallback: NodeHandler;
  /** Context values of each call. */
  contextValues: (req: NodeServerRequest) => ContextValues;
  /** Refuses a unary call by its headers before its body is read (credentials). Default: none refused. */
  gate?: CallGate;
}

interface Served {
  readonly handler: UniversalHandler;
  readonly rpc: UniversalHandler["method"];
  /** "package.Service/Method", the metric label. */
  readonly method: string;
}

const acceptCompression = [compressionGzip, compressionBrotli];

/**
 * What connect-node's `connectNodeAdapter` does (Connect, gRPC and gRPC-Web
 * on one node handler), answering as it does but for the differences listed
 * in README.md (above all: a request message that is not valid protobuf is
 * INVALID_ARGUMENT, where Connect says INTERNAL), and telling the request's
 * exchange the RPC, the protocol and the code of every answer given before a
 * call reaches the interceptors.
 * Unary calls, on every protocol, are served by the wire paths of this folder
 * (connect-unary.ts, grpc-unary.ts), which decide those answers themselves;
 * Connect's own handler serves the streaming methods (health `Watch`,
 * reflection) and refuses what no wire path takes (405, 415), whose HTTP
 * status says all.
 */
export interface ConnectHandler {
  /** Serves a request that node's compatibility layer made (HTTP/1.1, or an HTTP/2 stream not taken). */
  readonly handle: NodeHandler;
  /**
   * Takes an HTTP/2 stream of a common gRPC unary call and serves it off the
   * stream (grpc-stream-unary.ts), as the exchange `begin` makes; undefined,
   * having read nothing, for any other stream.
   */
  readonly takeStream: (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    begin: () => Exchange,
    contextValues: (exchange: Exchange) => ContextValues,
  ) => Exchange | undefined;
}

export function createConnectHandler(opts: ConnectHandlerOptions): ConnectHandler {
  const router = createConnectRouter({
    interceptors: [...opts.interceptors, streamInputInterceptor],
    readMaxBytes: opts.readMaxBytes,
    acceptCompression,
  });
  const unary: UnaryService[] = [];
  // Records the services registered, for the wire paths: one with options
  // other than its own read limit is left to Connect.
  const recording: ConnectRouter = {
    handlers: router.handlers,
    service(service, implementation, options) {
      router.service(service, implementation, options);
      const { readMaxBytes, ...others } = options ?? {};
      if (Object.keys(others).length === 0) {
        unary.push({
          spec: createServiceImplSpec(service, implementation),
          readMaxBytes: readMaxBytes ?? opts.readMaxBytes,
        });
      }
      return recording;
    },
    rpc(method, impl, options) {
      router.rpc(method, impl, options);
      return recording;
    },
  };
  opts.routes(recording);
  const serving = createUnaryServing({
    services: unary,
    interceptors: opts.interceptors,
    contextValues: opts.contextValues,
    acceptCompression,
    ...(opts.gate === undefined ? {} : { gate: opts.gate }),
  });
  const paths = new Map<string, Served>();
  const streamRoutes = new Map<string, StreamRoute>();
  const services = new Set(router.handlers.map((handler) => handler.service.typeName));
  for (const handler of router.handlers) {
    const method = `${handler.service.typeName}/${handler.method.name}`;
    paths.set(handler.requestPath, { handler, rpc: handler.method, method });
    const unaryMethod = serving.method(handler.method);
    if (unaryMethod !== undefined) {
      streamRoutes.set(handler.requestPath, { name: method, unary: unaryMethod });
    }
  }

  // Only for a request with an authority (checked first): connect-node's adapter throws without one.
  function viaConnect(served: Served, req: NodeServerRequest, res: NodeServerResponse): void {
    served
      .handler(universalRequestFromNodeRequest(req, res, undefined, opts.contextValues(req)))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        // Aborted: the client went away while the answer was written.
        if (ConnectError.from(reason).code !== Code.Aborted) {
          failAnswer(req, res, reason);
        }
      });
  }

  const handle: NodeHandler = (req, res) => {
    const served = paths.get(requestPath(req));
    if (served === undefined) {
      // A gRPC client calling a method we do not serve expects UNIMPLEMENTED, not a 404.
      if (isGrpcRequest(req)) {
        answerGrpcUnimplemented(req, res, services);
      } else {
        opts.fallback(req, res);
      }
      return;
    }
    const framing = grpcFraming(req.headers["content-type"]);
    const exchange = exchangeOf(req);
    exchange?.names(served.method, framing?.protocol ?? "connect");
    // HTTP/1.0 may come without Host (HTTP/1.1 is refused by the host guard): no URL to give a call.
    if (requestAuthority(req) === undefined) {
      refuse(res, exchange, NO_HOST);
      return;
    }
    const method = serving.method(served.rpc);
    const taken =
      method === undefined
        ? framing !== undefined &&
          // Connect refuses a bidi stream over HTTP/1.1 first (505), whatever its headers.
          !(served.rpc.methodKind === "bidi_streaming" && req.httpVersionMajor === 1) &&
          refuseGrpcStream(framing, serving, req, res)
        : framing === undefined
          ? serveConnectUnary(method, serving, req, res)
          : serveGrpcUnary(framing, method, serving, req, res);
    if (!taken) {
      viaConnect(served, req, res);
    }
  };
  return {
    handle,
    takeStream: (stream, headers, begin, contextValues) =>
      takeGrpcStream(streamRoutes, serving, stream, headers, begin, contextValues),
  };
}

const NO_HOST = "the request has no Host header";

function refuse(res: NodeServerResponse, exchange: Exchange | undefined, message: string): void {
  exchange?.answers(Code.InvalidArgument, message);
  res.writeHead(400, { "content-type": "text/plain" });
  res.end(`${message}\n`);
}
