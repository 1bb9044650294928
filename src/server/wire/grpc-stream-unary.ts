// The common gRPC unary call, served off a raw HTTP/2 stream.
//
// Tested by test/unit/server/wire/connect-handler-parity.test.ts, test/integration/read-limits.test.ts.

import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { ConnectError, type ContextValues } from "@connectrpc/connect";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import { admittedAs } from "../../admin-auth/call-gate.js";
import { lazyCallSignal } from "../../call/call-signal.js";
import type { RequestBody } from "../../http/request-body.js";
import { urlOf } from "../../http/request-url.js";
import { webHeaders } from "../../http/web-headers.js";
import type { Exchange } from "../exchange.js";
import { detach } from "./answer-failure.js";
import { readEnvelopedInput } from "./enveloped-input.js";
import { type GrpcAnswerFormat, grpcAnswers, refuseGrpc } from "./grpc-answer.js";
import {
  deadlineAfter,
  ENVELOPE_HEAD_BYTES,
  readUnaryBody,
  serveUnary,
  serveUnaryBody,
  type UnaryCalls,
  type UnaryMethod,
  type UnaryServing,
} from "./unary-method.js";

/** A unary method as the stream path finds it by its request path. */
export interface StreamRoute {
  /** "package.Service/Method", the exchange's method. */
  readonly name: string;
  readonly unary: UnaryMethod;
}

/** A raw stream's answer format: a stream taken always has its exchange. */
type StreamAnswerFormat = GrpcAnswerFormat & { readonly exchange: Exchange };

/**
 * Serves the common gRPC unary call straight off node's HTTP/2 stream, with
 * no request or response object of node's compatibility layer, no WHATWG
 * `Headers` unless a handler reads them, and no promise for reading the
 * body: `POST`, `application/grpc` or `application/grpc+proto`, an
 * uncompressed request (`grpc-encoding` absent or identity), an authority and
 * a readable `grpc-timeout` if any. The call runs through the same
 * invoker as every other path, and is answered by the same writer as
 * Connect's gRPC handler answers (headers, one envelope, trailers; the same
 * compression of large answers): test/unit/server/wire/connect-handler-parity.test.ts.
 * Returns undefined, having read nothing, for any other request: node's
 * compatibility layer then makes a request of it for the other paths.
 */
export function takeGrpcStream(
  route: StreamRoute,
  methods: UnaryCalls,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  begin: (method: string) => Exchange,
  contextValues: (exchange: Exchange) => ContextValues,
): Exchange | undefined {
  const terms = grpcStreamTerms(methods, headers);
  if (terms === undefined) {
    return undefined;
  }
  const exchange = begin(route.name);
  // A caller without the credential its service needs is refused before any body byte is read.
  const admitted = methods.admission(route.unary.method, headers, stream.session?.socket);
  if (admitted instanceof ConnectError) {
    detach(refuseGrpc(stream, answerFormat(route, terms, exchange), admitted));
    return exchange;
  }
  serveUnary(
    methods,
    streamServing(route, stream, headers, terms, exchange, contextValues, admitted),
  );
  return exchange;
}

/** How a raw stream's call is to be served, as its headers say. */
export interface GrpcStreamTerms {
  /** Unix ms; null for none. */
  readonly deadline: number | null;
  /** The negotiated compression of the answer. */
  readonly compression: Compression | null;
}

/**
 * The terms of a raw stream this path serves: `POST`, `application/grpc` or
 * `application/grpc+proto`, an uncompressed request (`grpc-encoding` absent
 * or identity), an authority and a readable `grpc-timeout` if any. Undefined
 * for any other stream: Connect's own paths answer it, in Connect's words.
 */
export function grpcStreamTerms(
  methods: UnaryCalls,
  headers: IncomingHttpHeaders,
): GrpcStreamTerms | undefined {
  const contentType = headers["content-type"];
  const encoding = headers["grpc-encoding"];
  const timeout = headers["grpc-timeout"];
  const accept = headers["grpc-accept-encoding"];
  if (
    headers[":method"] !== "POST" ||
    (contentType !== grpc.contentTypeProto && contentType !== "application/grpc") ||
    (encoding !== undefined && encoding !== "identity") ||
    headers[":authority"] === undefined ||
    typeof timeout === "object" ||
    typeof accept === "object"
  ) {
    return undefined;
  }
  let deadline: number | null = null;
  if (timeout !== undefined) {
    const parsed = grpc.parseTimeout(timeout, Number.MAX_SAFE_INTEGER);
    if (parsed.error !== undefined) {
      return undefined;
    }
    deadline = deadlineAfter(parsed.timeoutMs);
  }
  if (accept === undefined) {
    return deadline === null ? NO_TERMS : { deadline, compression: null };
  }
  return {
    deadline,
    compression: compressionNegotiate(
      methods.acceptCompression,
      null,
      accept,
      grpc.headerAcceptEncoding,
    ).response,
  };
}

const NO_TERMS: GrpcStreamTerms = { deadline: null, compression: null };

function answerFormat(
  route: StreamRoute,
  terms: GrpcStreamTerms,
  exchange: Exchange,
): StreamAnswerFormat {
  return {
    protocol: "grpc",
    contentType: grpc.contentTypeProto,
    text: false,
    compression: terms.compression,
    compressMinBytes: route.unary.compressMinBytes,
    exchange,
  };
}

/**
 * Reads a raw stream's body within the method's read limit, then `read` has
 * it; undefined when the deadline passed first (the body still arriving).
 */
export function readGrpcStream(
  route: StreamRoute,
  terms: GrpcStreamTerms,
  stream: ServerHttp2Stream,
  read: (body: RequestBody | undefined) => void,
): void {
  readUnaryBody(
    {
      source: stream,
      target: stream,
      deadline: terms.deadline,
      answersAtDeadline: true,
      readMaxBytes: route.unary.readMaxBytes + ENVELOPE_HEAD_BYTES,
      announced: route.unary.announced,
    },
    read,
  );
}

/**
 * Serves a raw stream's call once its body was read (undefined: its deadline
 * passed first), as the exchange, let in as `admitted`: decoded, made
 * through the invoker, answered by the same writer as Connect's gRPC handler.
 */
export function serveGrpcStreamBody(
  route: StreamRoute,
  methods: UnaryCalls,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  terms: GrpcStreamTerms,
  body: RequestBody | undefined,
  exchange: Exchange,
  contextValues: (exchange: Exchange) => ContextValues,
  admitted: string,
): void {
  serveUnaryBody(
    methods,
    streamServing(route, stream, headers, terms, exchange, contextValues, admitted),
    body,
  );
}

/** A raw stream's call, as the one serve path takes it. */
function streamServing(
  route: StreamRoute,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  terms: GrpcStreamTerms,
  exchange: Exchange,
  contextValues: (exchange: Exchange) => ContextValues,
  admitted: string,
): UnaryServing {
  const { unary } = route;
  const { deadline } = terms;
  return {
    unary,
    exchange,
    source: stream,
    target: stream,
    deadline,
    answersAtDeadline: true,
    readMaxBytes: unary.readMaxBytes + ENVELOPE_HEAD_BYTES,
    announced: unary.announced,
    answered: () => stream.headersSent,
    decode: (body) =>
      readEnvelopedInput(body, stream, {
        parse: unary.serialization.getI(true),
        readMaxBytes: unary.readMaxBytes,
        compression: null,
        endFlag: undefined,
      }),
    call: () => ({
      protocolName: "grpc",
      requestMethod: "POST",
      url: () => urlOf(stream.session?.socket, headers[":authority"], headers[":path"] ?? ""),
      header: () => webHeaders(headers),
      contextValues: admittedAs(contextValues(exchange), admitted),
      signal: lazyCallSignal(stream, deadline),
      ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
    }),
    ...grpcAnswers(stream, answerFormat(route, terms, exchange), unary, true),
  };
}
