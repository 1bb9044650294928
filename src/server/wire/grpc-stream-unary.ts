import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Message } from "@bufbuild/protobuf";
import type { ConnectError, ContextValues } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  encodeEnvelope,
} from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import { lazyCallSignal } from "../../call/call-signal.js";
import type { UnaryResult } from "../../call/unary-invoker.js";
import { type RequestBody, readBody, readNoMore } from "../../http/request-body.js";
import { urlOf } from "../../http/request-url.js";
import { nodeHeaders, webHeaders } from "../../http/web-headers.js";
import type { Exchange } from "../exchange.js";
import { callError } from "./answer-failure.js";
import { ENVELOPE_HEAD_BYTES, readEnvelopedInput } from "./enveloped-input.js";
import { whenCompressed } from "./grpc-unary.js";
import {
  deadlineAfter,
  deadlinePassed,
  type UnaryMethod,
  type UnaryServing,
  whenDeadlinePasses,
} from "./unary-method.js";

/** A unary method as the stream path finds it by its request path. */
export interface StreamRoute {
  /** "package.Service/Method", the exchange's method. */
  readonly name: string;
  readonly unary: UnaryMethod;
}

/** The answer of a stream call: its content type and negotiated compression. */
interface StreamAnswer {
  readonly compression: Compression | null;
  readonly compressMinBytes: number;
}

/**
 * Serves the common gRPC unary call straight off node's HTTP/2 stream, with
 * no request or response object of node's compatibility layer, no WHATWG
 * `Headers` unless a handler reads them, and no promise for reading the
 * body: `POST`, `application/grpc` or `application/grpc+proto`, an
 * uncompressed request (`grpc-encoding` absent or identity), an authority and
 * a readable `grpc-timeout` if any. The call runs through the same
 * interceptors and implementation as every other path, and is answered as
 * Connect's gRPC handler answers (headers, one envelope, trailers; the same
 * compression of large answers): test/unit/server/wire/wire-parity.test.ts.
 * Returns undefined, having read nothing, for any other request: node's
 * compatibility layer then makes a request of it for the other paths.
 */
export function takeGrpcStream(
  routes: ReadonlyMap<string, StreamRoute>,
  serving: UnaryServing,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  begin: () => Exchange,
  contextValues: (exchange: Exchange) => ContextValues,
): Exchange | undefined {
  const path = headers[":path"];
  const route = path === undefined ? undefined : routes.get(path);
  const contentType = headers["content-type"];
  const encoding = headers["grpc-encoding"];
  const timeout = headers["grpc-timeout"];
  const accept = headers["grpc-accept-encoding"];
  if (
    route === undefined ||
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
      return undefined; // Refused in Connect's words by the other path.
    }
    deadline = deadlineAfter(parsed.timeoutMs);
  }
  const answer: StreamAnswer = {
    compression:
      accept === undefined
        ? null
        : compressionNegotiate(serving.acceptCompression, null, accept, grpc.headerAcceptEncoding)
            .response,
    compressMinBytes: route.unary.compressMinBytes,
  };
  const exchange = begin();
  exchange.names(route.name, "grpc");
  // A caller without the credential its service needs is refused before any body byte is read.
  const refusal = serving.admit(route.unary.method, headers, stream.session?.socket);
  if (refusal !== undefined) {
    refuse(stream, exchange, answer, refusal);
    return exchange;
  }
  // The deadline may pass while the body is still arriving: answered then, as grpc-go does.
  const read = whenDeadlinePasses(deadline, stream, () => {
    if (!stream.headersSent) {
      refuse(stream, exchange, answer, deadlinePassed());
    }
  });
  readBody(
    stream,
    route.unary.readMaxBytes + ENVELOPE_HEAD_BYTES,
    (body) => {
      read();
      if (stream.headersSent) {
        return; // Refused at the deadline.
      }
      serve(route.unary, serving, stream, headers, exchange, answer, deadline, body, contextValues);
    },
    route.unary.announced,
  );
  return exchange;
}

function serve(
  served: UnaryMethod,
  serving: UnaryServing,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  exchange: Exchange,
  answer: StreamAnswer,
  deadline: number | null,
  body: RequestBody,
  contextValues: (exchange: Exchange) => ContextValues,
): void {
  const call = (input: Message): void => {
    serving
      .call("grpc", served.method, input, {
        requestMethod: "POST",
        url: () => urlOf(stream.session?.socket, headers[":authority"], headers[":path"] ?? ""),
        header: () => webHeaders(headers),
        contextValues: contextValues(exchange),
        signal: lazyCallSignal(stream, deadline),
        ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
      })
      .then(
        (result) => answerResult(stream, exchange, answer, served, result),
        (reason: unknown) => answerError(stream, exchange, answer, callError(reason)),
      )
      .catch((reason: unknown) => failStream(stream, exchange, reason));
  };
  if (deadline !== null && body.ended && Date.now() >= deadline) {
    refuse(stream, exchange, answer, deadlinePassed());
    return;
  }
  let input: Message | Promise<Message>;
  try {
    input = readEnvelopedInput(body, stream, {
      parse: served.serialization.getI(true),
      readMaxBytes: served.readMaxBytes,
      compression: null,
      endFlag: undefined,
    });
  } catch (reason) {
    refuse(stream, exchange, answer, reason);
    return;
  }
  if (input instanceof Promise) {
    input.then(call, (reason: unknown) => refuse(stream, exchange, answer, reason));
  } else {
    call(input);
  }
}

/** Answers an error given before the call (the request's bytes), telling the exchange. */
function refuse(
  stream: ServerHttp2Stream,
  exchange: Exchange,
  answer: StreamAnswer,
  reason: unknown,
): void {
  const error = callError(reason);
  exchange.answers(error.code, error.rawMessage);
  answerError(stream, exchange, answer, error);
}

function answerResult(
  stream: ServerHttp2Stream,
  exchange: Exchange,
  answer: StreamAnswer,
  served: UnaryMethod,
  result: UnaryResult,
): void | Promise<void> {
  if (stream.destroyed) {
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = served.serialization.getO(true).serialize(result.message);
  } catch (reason) {
    return refuse(stream, exchange, answer, reason);
  }
  const trailer = nodeHeaders(result.trailer, { "grpc-status": "0" });
  return whenCompressed(stream, answer, { flags: 0, data: bytes }, (message) => {
    respond(
      stream,
      exchange,
      answer,
      result.header,
      trailer,
      encodeEnvelope(message.flags, message.data),
    );
  });
}

/** As Connect: status 200, the headers, no message, and the error in the trailers. */
function answerError(
  stream: ServerHttp2Stream,
  exchange: Exchange,
  answer: StreamAnswer,
  error: ConnectError,
): void {
  if (stream.destroyed) {
    return;
  }
  const trailer = nodeHeaders(grpc.setTrailerStatus(new Headers({ "grpc-status": "0" }), error));
  // In the trailers too, as the interceptors put it for a call's error; refusals made before one have it only here.
  if (exchange.requestId !== "") {
    trailer["x-request-id"] = exchange.requestId;
  }
  respond(stream, exchange, answer, undefined, trailer, undefined);
}

/** One `respond`, one `end` and the trailers: the whole answer. */
function respond(
  stream: ServerHttp2Stream,
  exchange: Exchange,
  answer: StreamAnswer,
  header: Headers | undefined,
  trailer: Record<string, string>,
  body: Uint8Array | undefined,
): void {
  const head: Record<string, string | number> = {
    ":status": 200,
    "content-type": grpc.contentTypeProto,
  };
  // Every answer of the listener carries its exchange's id (none outside it: the parity test).
  if (exchange.requestId !== "") {
    head["x-request-id"] = exchange.requestId;
  }
  if (answer.compression !== null) {
    head["grpc-encoding"] = answer.compression.name;
  }
  header?.forEach((value, name) => {
    head[name] = value;
  });
  stream.respond(head, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers(trailer));
  exchange.sent(200);
  stream.end(body);
  if (!stream.readableEnded) {
    // Answered before the body ended (a refusal): no more of it is read.
    readNoMore(stream, true);
  }
}

/**
 * A failure of the service itself while answering: told to the exchange, then
 * an empty 500, or the stream reset if the answer has begun.
 */
function failStream(stream: ServerHttp2Stream, exchange: Exchange, reason: unknown): void {
  if (stream.destroyed) {
    return;
  }
  exchange.answers(callError(reason).code, String(reason));
  if (stream.headersSent) {
    stream.destroy();
    return;
  }
  stream.respond({ ":status": 500, "x-request-id": exchange.requestId }, { endStream: true });
  exchange.sent(500);
}
