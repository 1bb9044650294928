import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createConnectRouter,
  createServiceImplSpec,
  type Interceptor,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { CallGate } from "../../admin-auth/call-gate.js";
import { createUnaryInvoker, type UnaryInvoker } from "../../call/unary-invoker.js";
import type {
  NodeHandler,
  NodeServerRequest,
  NodeServerResponse,
} from "../../http/node-handler.js";
import { requestPath } from "../../http/request-path.js";
import { requestAuthority } from "../../http/request-url.js";
import { type Exchange, exchangeOf } from "../exchange.js";
import { refuseWithStatus } from "../status-refusal.js";
import { failAnswer } from "./answer-failure.js";
import { serveConnectUnary } from "./connect-unary.js";
import { answerGrpcUnimplemented, isGrpcRequest } from "./grpc-answer.js";
import { type StreamRoute, takeGrpcStream } from "./grpc-stream-unary.js";
import { grpcFraming, refuseGrpcStream, serveGrpcUnary } from "./grpc-unary.js";
import { streamInputInterceptor } from "./input-error.js";
import { createUnaryCalls, type UnaryCalls, type UnaryService } from "./unary-method.js";

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

/** The RPC at a request path: Connect's handler of it, and its label. */
interface RpcPath {
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
  /**
   * The one way into a unary call of the services routed, through the
   * interceptors: every wire path's, and the REST gateway's
   * (`createRestGateway`'s `invoker`).
   */
  readonly invoker: UnaryInvoker;
  /** Serves a request that node's compatibility layer made (HTTP/1.1, or an HTTP/2 stream not taken). */
  readonly handle: NodeHandler;
  /**
   * Takes an HTTP/2 stream of a common gRPC unary call and serves it off the
   * stream (grpc-stream-unary.ts), as the exchange `begin` makes for the
   * RPC it names; undefined, having read nothing, for any other stream.
   */
  readonly takeStream: (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    begin: (method: string) => Exchange,
    contextValues: (exchange: Exchange) => ContextValues,
  ) => Exchange | undefined;
  /** The raw-stream route of a request path, and the methods: the check lane hands its misses to them. */
  streamRoute(path: string): StreamRoute | undefined;
  readonly methods: UnaryCalls;
}

export function createConnectHandler(opts: ConnectHandlerOptions): ConnectHandler {
  const router = createConnectRouter({
    interceptors: [...opts.interceptors, streamInputInterceptor],
    readMaxBytes: opts.readMaxBytes,
    acceptCompression,
  });
  const unary: UnaryService[] = [];
  const specs: ServiceImplSpec[] = [];
  // Records the services registered, for the wire paths: one with options
  // other than its own read limit is left to Connect.
  const recording: ConnectRouter = {
    handlers: router.handlers,
    service(service, implementation, options) {
      router.service(service, implementation, options);
      const spec = createServiceImplSpec(service, implementation);
      specs.push(spec);
      const { readMaxBytes, ...others } = options ?? {};
      if (Object.keys(others).length === 0) {
        unary.push({ spec, readMaxBytes: readMaxBytes ?? opts.readMaxBytes });
      }
      return recording;
    },
    rpc(method, impl, options) {
      router.rpc(method, impl, options);
      return recording;
    },
  };
  opts.routes(recording);
  const invoker = createUnaryInvoker({ services: specs, interceptors: opts.interceptors });
  const methods = createUnaryCalls({
    services: unary,
    invoker,
    contextValues: opts.contextValues,
    acceptCompression,
    ...(opts.gate === undefined ? {} : { gate: opts.gate }),
  });
  const paths = new Map<string, RpcPath>();
  const streamRoutes = new Map<string, StreamRoute>();
  const services = new Set(router.handlers.map((handler) => handler.service.typeName));
  for (const handler of router.handlers) {
    const method = `${handler.service.typeName}/${handler.method.name}`;
    paths.set(handler.requestPath, { handler, rpc: handler.method, method });
    const unaryMethod = methods.find(handler.method);
    if (unaryMethod !== undefined) {
      streamRoutes.set(handler.requestPath, { name: method, unary: unaryMethod });
    }
  }

  // Only for a request with an authority (checked first): connect-node's adapter throws without one.
  function viaConnect(path: RpcPath, req: NodeServerRequest, res: NodeServerResponse): void {
    path
      .handler(universalRequestFromNodeRequest(req, res, undefined, opts.contextValues(req)))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        // Aborted: the client went away while the answer was written.
        if (ConnectError.from(reason).code !== Code.Aborted) {
          failAnswer(res, exchangeOf(req), reason);
        }
      });
  }

  const handle: NodeHandler = (req, res) => {
    const path = paths.get(requestPath(req));
    if (path === undefined) {
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
    exchange?.nameCall(path.method, framing?.protocol ?? "connect");
    // HTTP/1.0 may come without Host (HTTP/1.1 is refused by the host guard): no URL to give a call.
    if (requestAuthority(req) === undefined) {
      refuseWithStatus(req, res, NO_HOST);
      return;
    }
    const unary = methods.find(path.rpc);
    const taken =
      unary === undefined
        ? framing !== undefined &&
          // Connect refuses a bidi stream over HTTP/1.1 first (505), whatever its headers.
          !(path.rpc.methodKind === "bidi_streaming" && req.httpVersionMajor === 1) &&
          refuseGrpcStream(framing, methods, req, res)
        : framing === undefined
          ? serveConnectUnary(unary, methods, req, res)
          : serveGrpcUnary(framing, unary, methods, req, res);
    if (!taken) {
      viaConnect(path, req, res);
    }
  };
  return {
    invoker,
    handle,
    methods,
    streamRoute: (path) => streamRoutes.get(path),
    takeStream: (stream, headers, begin, contextValues) => {
      const path = headers[":path"];
      const route = path === undefined ? undefined : streamRoutes.get(path);
      return route === undefined
        ? undefined
        : takeGrpcStream(route, methods, stream, headers, begin, contextValues);
    },
  };
}

const NO_HOST = {
  status: 400,
  code: Code.InvalidArgument,
  message: "the request has no Host header",
} as const;
