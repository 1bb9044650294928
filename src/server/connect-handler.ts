import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createConnectRouter,
  createServiceImplSpec,
  type Interceptor,
} from "@connectrpc/connect";
import {
  createAsyncIterable,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse } from "@connectrpc/connect/protocol-grpc-web";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import { rpcProtocol } from "./call-protocol.js";
import { type Exchange, exchangeOf } from "./exchange.js";
import { createGrpcUnary, type GrpcUnaryService } from "./grpc-unary.js";
import { answerGrpcUnimplemented, isGrpcRequest } from "./grpc-unimplemented.js";

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
}

interface Served {
  readonly handler: UniversalHandler;
  readonly rpc: UniversalHandler["method"];
  /** "package.Service/Method", the metric label. */
  readonly method: string;
}

/**
 * What connect-node's `connectNodeAdapter` does (Connect, gRPC and gRPC-Web
 * on one node handler), and also what it does not tell: the RPC and protocol
 * of each request, and the code and message of the answers Connect gives by
 * itself before a call reaches the interceptors (unsupported content type or
 * HTTP method, a malformed or too large message), noted in the request's
 * exchange for the listener's log line and count. A call that reached the
 * interceptors is answered exactly as by the adapter. gRPC unary calls take
 * a lean path (grpc-unary.ts) that gives the same answers without Connect's
 * generic handler.
 */
export function createConnectHandler(opts: ConnectHandlerOptions): NodeHandler {
  const router = createConnectRouter({
    interceptors: opts.interceptors,
    readMaxBytes: opts.readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  const lean: GrpcUnaryService[] = [];
  // Records the services registered, for the lean gRPC path: one with options
  // other than its own read limit is left to Connect.
  const recording: ConnectRouter = {
    handlers: router.handlers,
    service(service, implementation, options) {
      router.service(service, implementation, options);
      const { readMaxBytes, ...others } = options ?? {};
      if (Object.keys(others).length === 0) {
        lean.push({
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
  const grpcUnary = createGrpcUnary({
    services: lean,
    interceptors: opts.interceptors,
    contextValues: opts.contextValues,
  });
  const paths = new Map<string, Served>();
  const services = new Set(router.handlers.map((handler) => handler.service.typeName));
  for (const handler of router.handlers) {
    paths.set(handler.requestPath, {
      handler,
      rpc: handler.method,
      method: `${handler.service.typeName}/${handler.method.name}`,
    });
  }

  function viaConnect(
    served: Served,
    req: NodeServerRequest,
    res: NodeServerResponse,
    exchange: Exchange | undefined,
    body: AsyncIterable<Uint8Array> | undefined,
  ): void {
    let uReq: UniversalServerRequest;
    try {
      uReq = universalRequestFromNodeRequest(req, res, undefined, opts.contextValues(req));
    } catch {
      // No authority: an HTTP/1.0 request without a Host header.
      refuse(res, exchange, "the request has no Host header");
      return;
    }
    served
      .handler(body === undefined ? uReq : { ...uReq, body })
      .then((uRes) =>
        exchange === undefined || exchange.called
          ? universalResponseToNodeResponse(uRes, res)
          : answerRefusal(uRes, res, exchange),
      )
      .catch((reason: unknown) => {
        // Aborted: the client went away while the answer was written.
        if (ConnectError.from(reason).code !== Code.Aborted) {
          fail(res, exchange, reason);
        }
      });
  }

  return (req, res) => {
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
    const exchange = exchangeOf(req);
    exchange?.names(served.method, rpcProtocol(req.headers["content-type"]));
    if (
      !grpcUnary.serve(served.rpc, req, res, (body) => viaConnect(served, req, res, exchange, body))
    ) {
      viaConnect(served, req, res, exchange, undefined);
    }
  };
}

function refuse(res: NodeServerResponse, exchange: Exchange | undefined, message: string): void {
  exchange?.answers(Code.InvalidArgument, message);
  res.writeHead(400, { "content-type": "text/plain" });
  res.end(`${message}\n`);
}

/**
 * A failure of Connect itself, not of a call (a call's failure is an answer):
 * an empty 500, or the end of the connection if the answer has begun.
 */
function fail(res: NodeServerResponse, exchange: Exchange | undefined, reason: unknown): void {
  exchange?.answers(Code.Internal, String(reason));
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(500);
  res.end();
}

/**
 * Sends a refusal Connect made before the interceptors, noting its code and
 * message: a refusal is small, so its body is read here in full first.
 */
async function answerRefusal(
  uRes: UniversalServerResponse,
  res: NodeServerResponse,
  exchange: Exchange,
): Promise<void> {
  const chunks: Uint8Array[] = [];
  try {
    if (uRes.body !== undefined) {
      for await (const chunk of uRes.body) {
        chunks.push(chunk);
      }
    }
    const error = refusalOf(uRes, exchange.protocol, Buffer.concat(chunks));
    if (error !== undefined) {
      exchange.answers(error.code, error.rawMessage);
    }
  } catch (err) {
    fail(res, exchange, err);
    return;
  }
  await universalResponseToNodeResponse({ ...uRes, body: createAsyncIterable(chunks) }, res).catch(
    () => {
      // The client went away; the exchange is logged as abandoned.
    },
  );
}

/** The error a refusal carries, where its protocol puts it; undefined when only its HTTP status tells. */
function refusalOf(
  uRes: UniversalServerResponse,
  protocol: string,
  body: Buffer,
): ConnectError | undefined {
  const inHeader = uRes.header === undefined ? undefined : findTrailerError(uRes.header);
  if (inHeader !== undefined) {
    return inHeader;
  }
  switch (protocol) {
    case "grpc":
      return uRes.trailer === undefined ? undefined : findTrailerError(uRes.trailer);
    case "grpc-web":
      return grpcWebTrailerError(body);
    default:
      return uRes.status === 200 || body.length === 0
        ? undefined
        : errorFromJsonBytes(body, undefined, new ConnectError("", Code.Unknown));
  }
}

/** The error in the trailer message of a gRPC-Web response body (the last envelope, flagged). */
function grpcWebTrailerError(body: Buffer): ConnectError | undefined {
  let offset = 0;
  while (offset + 5 <= body.length) {
    const flags = body.readUInt8(offset);
    const length = body.readUInt32BE(offset + 1);
    const data = body.subarray(offset + 5, offset + 5 + length);
    offset += 5 + length;
    if ((flags & trailerFlag) === trailerFlag) {
      return findTrailerError(trailerParse(data));
    }
  }
  return undefined;
}
