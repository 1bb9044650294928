import type { ServerHttp2Stream } from "node:http2";
import type { ConnectError } from "@connectrpc/connect";
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
import type { NodeServerResponse } from "../../http/node-handler.js";
import { readNoMore } from "../../http/request-body.js";
import { nodeHeaders } from "../../http/web-headers.js";
import { answersWithoutId, type Exchange } from "../exchange.js";

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
