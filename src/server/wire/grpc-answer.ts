import type { ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  type EnvelopedMessage,
  encodeEnvelope,
  encodeEnvelopes,
  envelopeCompress,
} from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
import { isCallOver } from "../../call/call-signal.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { readNoMore } from "../../http/request-body.js";
import { requestPath } from "../../http/request-path.js";
import { nodeHeaders } from "../../http/web-headers.js";
import { rpcProtocol } from "../call-protocol.js";
import { answersWithoutId, type Exchange, exchangeOf } from "../exchange.js";
import { detach } from "./answer-failure.js";
import { serializedAnswer, type UnaryMethod, type UnaryServing } from "./unary-method.js";

/**
 * Where a gRPC or gRPC-Web answer is written: a response of node's
 * compatibility layer (HTTP/1.1 or HTTP/2), or a raw HTTP/2 stream (the
 * common gRPC call, grpc-stream-unary.ts).
 */
export type GrpcAnswerTarget = NodeServerResponse | ServerHttp2Stream;

/** How a gRPC or gRPC-Web answer is written, as the request's headers decided it. */
export interface GrpcAnswerFormat {
  readonly protocol: "grpc" | "grpc-web";
  readonly contentType: string;
  /** gRPC-Web-Text: the body in base64 (only the UNIMPLEMENTED answer is written so). */
  readonly text: boolean;
  /** The negotiated compression of the answer's envelopes. */
  readonly compression: Compression | null;
  readonly compressMinBytes: number;
  /** The request's exchange: its id goes in every error's trailers; undefined outside a listener. */
  readonly exchange: Exchange | undefined;
}

function isStream(to: GrpcAnswerTarget): to is ServerHttp2Stream {
  return "respond" in to;
}

function isGone(to: GrpcAnswerTarget): boolean {
  return isStream(to) ? to.destroyed : isCallOver(to);
}

/** A call's answer: its message (serialized), and its headers and trailers (undefined: none). */
export function answerGrpcResult(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  header: Headers | undefined,
  trailer: Headers | undefined,
  bytes: Uint8Array,
): void | Promise<void> {
  if (isGone(to)) {
    return;
  }
  const trailers = nodeHeaders(trailer, { "grpc-status": "0" });
  return whenCompressed(to, format, { flags: 0, data: bytes }, (message) =>
    writeGrpcAnswer(to, format, header, trailers, message),
  );
}

/**
 * A call's error, as Connect answers it: status 200, the headers, no
 * message, and the error where the protocol puts trailers, with the request
 * id (the interceptors put it in the error's metadata; a refusal made before
 * a call has it only here).
 */
export function answerGrpcError(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  error: ConnectError,
): void | Promise<void> {
  if (isGone(to)) {
    return;
  }
  const trailers = nodeHeaders(grpc.setTrailerStatus(new Headers({ "grpc-status": "0" }), error));
  const requestId = format.exchange?.requestId;
  if (requestId !== undefined && requestId !== "") {
    trailers["x-request-id"] = requestId;
  }
  return writeGrpcAnswer(to, format, undefined, trailers, undefined);
}

/**
 * A refusal given before a call (the request's headers or bytes): recorded
 * on the exchange, which the interceptors would have done for a call's
 * error, then answered as one.
 */
export function refuseGrpc(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  error: ConnectError,
): void | Promise<void> {
  format.exchange?.recordOutcome(error.code, error.rawMessage);
  return answerGrpcError(to, format, error);
}

/** How a gRPC or gRPC-Web unary call of `unary` is answered on `to`, as `serveUnary` writes it. */
export function grpcAnswers(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  unary: UnaryMethod,
  binary: boolean,
): Pick<UnaryServing, "answer" | "answerError" | "refuse"> {
  return {
    answer: (result) => {
      const bytes = serializedAnswer(unary, binary, result);
      return bytes instanceof ConnectError
        ? refuseGrpc(to, format, bytes)
        : answerGrpcResult(to, format, result.header, result.trailer, bytes);
    },
    answerError: (error) => answerGrpcError(to, format, error),
    refuse: (error) => refuseGrpc(to, format, error),
  };
}

/**
 * The one writer of gRPC and gRPC-Web answers: status 200, the headers, the
 * message if any, and the trailers where the protocol puts them. An answer
 * given before the request's body ended (a refusal) reads no more of it.
 */
function writeGrpcAnswer(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  header: Headers | undefined,
  trailers: Record<string, string>,
  message: EnvelopedMessage | undefined,
): void | Promise<void> {
  if (isStream(to)) {
    const head: Record<string, string | number> = {
      ":status": 200,
      "content-type": format.contentType,
    };
    // The listener's compatibility responses carry it already; a raw stream's answer gets it here.
    const requestId = format.exchange?.requestId;
    if (requestId !== undefined && requestId !== "" && !answersWithoutId(format.exchange)) {
      head["x-request-id"] = requestId;
    }
    if (format.compression !== null) {
      head["grpc-encoding"] = format.compression.name;
    }
    to.respond(nodeHeaders(header, head), { waitForTrailers: true });
    to.once("wantTrailers", () => to.sendTrailers(trailers));
    to.end(message === undefined ? undefined : encodeEnvelope(message.flags, message.data));
    if (!to.readableEnded) {
      readNoMore(to, true);
    }
    return;
  }
  if (answersWithoutId(format.exchange)) {
    to.removeHeader("x-request-id");
  }
  const head = nodeHeaders(header, {
    "content-type": format.contentType,
    ...(format.compression === null ? {} : { "grpc-encoding": format.compression.name }),
  });
  if (format.protocol === "grpc") {
    to.writeHead(200, head);
    to.addTrailers(trailers);
    if (message === undefined) {
      to.end();
    } else {
      to.end(encodeEnvelope(message.flags, message.data));
    }
    if (!to.req.readableEnded) {
      readNoMore(to.req, true);
    }
    return;
  }
  // gRPC-Web's trailers: the last envelope of the body.
  const trailer = {
    flags: grpcWeb.trailerFlag,
    data: grpcWeb.trailerSerialize(new Headers(trailers)),
  };
  return whenCompressed(to, format, trailer, (trailerEnvelope) => {
    const bytes =
      message === undefined
        ? encodeEnvelope(trailerEnvelope.flags, trailerEnvelope.data)
        : encodeEnvelopes(message, trailerEnvelope);
    to.writeHead(200, head);
    to.end(format.text ? Buffer.from(bytes).toString("base64") : bytes);
    if (!to.req.readableEnded) {
      readNoMore(to.req, false);
    }
  });
}

/**
 * Runs `then` with the envelope as the answer sends it: compressed as
 * Connect does (`envelopeCompress`) when the client accepts compression and
 * the envelope is large enough, else as it is, at once (most answers: no
 * promise on the hot path). `then` is not run once the client is gone.
 */
function whenCompressed(
  to: GrpcAnswerTarget,
  format: GrpcAnswerFormat,
  envelope: EnvelopedMessage,
  then: (envelope: EnvelopedMessage) => void | Promise<void>,
): void | Promise<void> {
  if (format.compression === null || envelope.data.byteLength < format.compressMinBytes) {
    return then(envelope);
  }
  return envelopeCompress(envelope, format.compression, format.compressMinBytes).then(
    (compressed) => (isGone(to) ? undefined : then(compressed)),
  );
}

// A method not served, in gRPC's words.

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
