// The common gRPC unary call, served off a raw HTTP/2 stream.
//
// Tested by test/unit/server/wire/connect-handler-parity.test.ts, test/integration/read-limits.test.ts.

import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Message } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues } from "@connectrpc/connect";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import { admittedAs } from "../../admin-auth/call-gate.js";
import { lazyCallSignal } from "../../call/call-signal.js";
import { type RequestBody, readBody } from "../../http/request-body.js";
import { urlOf } from "../../http/request-url.js";
import { webHeaders } from "../../http/web-headers.js";
import type { Exchange } from "../exchange.js";
import { callError, failAnswer } from "./answer-failure.js";
import { ENVELOPE_HEAD_BYTES, readEnvelopedInput } from "./enveloped-input.js";
import {
  answerGrpcError,
  answerGrpcResult,
  type GrpcAnswerFormat,
  refuseGrpc,
} from "./grpc-answer.js";
import {
  deadlineAfter,
  deadlinePassed,
  type UnaryCalls,
  type UnaryMethod,
  whenDeadlinePasses,
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
    refuseGrpc(stream, answerFormat(route, terms, exchange), admitted);
    return exchange;
  }
  readGrpcStream(route, terms, stream, (body) =>
    serveGrpcStreamBody(route, methods, stream, headers, terms, body, exchange, (values) =>
      admittedAs(contextValues(values), admitted),
    ),
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
  // The deadline may pass while the body is still arriving: answered then, as grpc-go does.
  let late = false;
  const cancel = whenDeadlinePasses(terms.deadline, stream, () => {
    late = true;
    read(undefined);
  });
  readBody(
    stream,
    route.unary.readMaxBytes + ENVELOPE_HEAD_BYTES,
    (body) => {
      cancel();
      if (!late) {
        read(body);
      }
    },
    route.unary.announced,
  );
}

/**
 * Serves a raw stream's call once its body was read (undefined: its deadline
 * passed first), as the exchange: decoded, made through the invoker,
 * answered by the same writer as Connect's gRPC handler.
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
): void {
  const format = answerFormat(route, terms, exchange);
  if (body === undefined) {
    if (!stream.headersSent) {
      refuseGrpc(stream, format, deadlinePassed());
    }
    return;
  }
  if (stream.headersSent) {
    return;
  }
  serve(route.unary, methods, stream, headers, format, terms.deadline, body, contextValues);
}

function serve(
  unary: UnaryMethod,
  methods: UnaryCalls,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  format: StreamAnswerFormat,
  deadline: number | null,
  body: RequestBody,
  contextValues: (exchange: Exchange) => ContextValues,
): void {
  const { exchange } = format;
  const invoke = (input: Message): void => {
    methods.invoker
      .invoke(unary.method, input, {
        protocolName: "grpc",
        requestMethod: "POST",
        url: () => urlOf(stream.session?.socket, headers[":authority"], headers[":path"] ?? ""),
        header: () => webHeaders(headers),
        contextValues: contextValues(exchange),
        signal: lazyCallSignal(stream, deadline),
        ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
      })
      .then(
        (result) => {
          let bytes: Uint8Array;
          try {
            bytes = unary.serialization.getO(true).serialize(result.message);
          } catch (reason) {
            return refuseGrpc(stream, format, callError(reason));
          }
          return answerGrpcResult(stream, format, result.header, result.trailer, bytes);
        },
        (reason: unknown) => answerGrpcError(stream, format, callError(reason)),
      )
      .catch((reason: unknown) => failAnswer(stream, exchange, reason));
  };
  if (deadline !== null && body.ended && Date.now() >= deadline) {
    refuseGrpc(stream, format, deadlinePassed());
    return;
  }
  let input: Message | Promise<Message>;
  try {
    input = readEnvelopedInput(body, stream, {
      parse: unary.serialization.getI(true),
      readMaxBytes: unary.readMaxBytes,
      compression: null,
      endFlag: undefined,
    });
  } catch (reason) {
    refuseGrpc(stream, format, callError(reason));
    return;
  }
  if (input instanceof Promise) {
    input.then(invoke, (reason: unknown) => refuseGrpc(stream, format, callError(reason)));
  } else {
    invoke(input);
  }
}
