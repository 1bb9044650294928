import type { ServerHttp2Stream } from "node:http2";
import type { Message } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  type EnvelopedMessage,
  encodeEnvelope,
  encodeEnvelopes,
  envelopeCompress,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
import { isCallOver } from "../../call/call-signal.js";
import type { UnaryResult } from "../../call/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { readNoMore, readRequestBody } from "../../http/request-body.js";
import { nodeHeaders, stringOrNull } from "../../http/web-headers.js";
import { rpcProtocol } from "../call-protocol.js";
import { exchangeOf } from "../exchange.js";
import { callError, detach, failAnswer } from "./answer-failure.js";
import { ENVELOPE_HEAD_BYTES, readEnvelopedInput } from "./enveloped-input.js";
import {
  deadlineAfter,
  deadlinePassed,
  serializedAnswer,
  type UnaryMethod,
  type UnaryServing,
  whenDeadlinePasses,
} from "./unary-method.js";

/** Where gRPC and gRPC-Web differ for a unary call. */
interface Framing {
  readonly protocol: "grpc" | "grpc-web";
  /** The request's codec by its content type; undefined for one Connect refuses (415). */
  readonly codec: (contentType: string | undefined) => { binary: boolean } | undefined;
  readonly contentTypeProto: string;
  readonly contentTypeJson: string;
  /** The flag of a request envelope that is not a message. */
  readonly endFlag: number | undefined;
}

const GRPC: Framing = {
  protocol: "grpc",
  codec: (contentType) => grpc.parseContentType(contentType ?? null),
  contentTypeProto: grpc.contentTypeProto,
  contentTypeJson: grpc.contentTypeJson,
  endFlag: undefined,
};

const GRPC_WEB: Framing = {
  protocol: "grpc-web",
  // Connect serves no gRPC-Web-Text: it answers 415, and so it is left to it.
  codec: (contentType) => {
    const type = grpcWeb.parseContentType(contentType ?? null);
    return type === undefined || type.text ? undefined : type;
  },
  contentTypeProto: grpcWeb.contentTypeProto,
  contentTypeJson: grpcWeb.contentTypeJson,
  endFlag: grpcWeb.trailerFlag,
};

/** The framing of a gRPC (`application/grpc…`) or gRPC-Web request; undefined for other protocols. */
export function grpcFraming(contentType: string | undefined): Framing | undefined {
  const protocol = rpcProtocol(contentType);
  return protocol === "grpc" ? GRPC : protocol === "grpc-web" ? GRPC_WEB : undefined;
}

/**
 * Serves a unary call in gRPC or gRPC-Web: the answers of Connect's gRPC and
 * gRPC-Web handlers (same headers, trailers, envelopes, compression and
 * words; test/unit/server/wire/wire-parity.test.ts), without their async
 * iterable pipeline, and with a malformed message INVALID_ARGUMENT. False,
 * before anything is read, for a request whose content type Connect refuses.
 */
export function serveGrpcUnary(
  framing: Framing,
  served: UnaryMethod,
  serving: UnaryServing,
  req: NodeServerRequest,
  res: NodeServerResponse,
): boolean {
  const headers = callOf(framing, serving, served.compressMinBytes, req);
  if (headers === undefined) {
    return false;
  }
  const { type, answer, compression, deadline } = headers;
  // A caller without the credential its service needs is refused before any body byte is read.
  const refusal =
    headers.refusal ?? serving.admit(served.method, req.headers, req.socket ?? undefined);
  if (refusal !== undefined) {
    detach(refuse(req, res, answer, refusal));
    return true;
  }
  const call = (input: Message) =>
    serving.invoke(framing.protocol, served.method, input, req, res, deadline).then(
      (result) =>
        answerResult(req, res, answer, result, serializedAnswer(served, type.binary, result)),
      (reason: unknown) => answerError(res, answer, callError(reason)),
    );
  // The deadline may pass while the body is still arriving: answered then, as grpc-go does.
  const read = whenDeadlinePasses(deadline, res, () => {
    if (!res.headersSent) {
      detach(refuse(req, res, answer, deadlinePassed()));
    }
  });
  readRequestBody(req, served.readMaxBytes + ENVELOPE_HEAD_BYTES, served.announced)
    .then((body) => {
      read();
      if (res.headersSent) {
        return; // Refused at the deadline.
      }
      if (deadline !== null && body.ended && Date.now() >= deadline) {
        return refuse(req, res, answer, deadlinePassed());
      }
      let input: Message | Promise<Message>;
      try {
        input = readEnvelopedInput(body, req, {
          parse: served.serialization.getI(type.binary),
          readMaxBytes: served.readMaxBytes,
          compression: compression.request,
          endFlag: framing.endFlag,
        });
      } catch (reason) {
        return refuse(req, res, answer, ConnectError.from(reason));
      }
      return input instanceof Promise
        ? input.then(call, (reason: unknown) => refuse(req, res, answer, ConnectError.from(reason)))
        : call(input);
    })
    .catch((reason: unknown) => failAnswer(req, res, reason));
  return true;
}

/**
 * For a streaming method, which Connect's own handler serves: answers
 * (true) a request Connect would refuse before the call for its
 * `grpc-timeout` or `grpc-encoding`, as Connect would but telling the
 * exchange; false for every other request, left to Connect.
 */
export function refuseGrpcStream(
  framing: Framing,
  serving: UnaryServing,
  req: NodeServerRequest,
  res: NodeServerResponse,
): boolean {
  const call = callOf(framing, serving, DEFAULT_COMPRESS_MIN_BYTES, req);
  if (call?.refusal === undefined) {
    return false;
  }
  detach(refuse(req, res, call.answer, call.refusal));
  return true;
}

// Connect's default `compressMinBytes`; the streaming methods are registered without options.
const DEFAULT_COMPRESS_MIN_BYTES = validateReadWriteMaxBytes(
  undefined,
  undefined,
  undefined,
).compressMinBytes;

/** What Connect's gRPC and gRPC-Web handlers read from a request's headers before its body. */
interface CallHeaders {
  readonly type: { binary: boolean };
  readonly answer: Answer;
  readonly compression: { request: Compression | null };
  readonly deadline: number | null;
  /** The refusal of a bad `grpc-encoding` or `grpc-timeout`, as Connect words it. */
  readonly refusal: ConnectError | undefined;
}

/** The call's headers; undefined for a request Connect refuses by its method or content type (405, 415). */
function callOf(
  framing: Framing,
  serving: UnaryServing,
  compressMinBytes: number,
  req: NodeServerRequest,
): CallHeaders | undefined {
  const type = req.method === "POST" ? framing.codec(req.headers["content-type"]) : undefined;
  if (type === undefined) {
    return undefined;
  }
  const requestId = exchangeOf(req)?.requestId;
  const header = req.headers;
  const timeout = grpc.parseTimeout(stringOrNull(header["grpc-timeout"]), Number.MAX_SAFE_INTEGER);
  const compression = compressionNegotiate(
    serving.acceptCompression,
    stringOrNull(header["grpc-encoding"]),
    stringOrNull(header["grpc-accept-encoding"]),
    grpc.headerAcceptEncoding,
  );
  return {
    type,
    answer: {
      framing,
      contentType: type.binary ? framing.contentTypeProto : framing.contentTypeJson,
      compression: compression.response,
      compressMinBytes,
      requestId: requestId === "" ? undefined : requestId,
    },
    compression,
    deadline: deadlineAfter(timeout.timeoutMs),
    refusal: compression.error ?? timeout.error,
  };
}

/** Answers an error given before the call, telling the exchange. */
function refuse(
  req: NodeServerRequest,
  res: NodeServerResponse,
  answer: Answer,
  error: ConnectError,
): void | Promise<void> {
  exchangeOf(req)?.answers(error.code, error.rawMessage);
  return answerError(res, answer, error);
}

interface Answer {
  readonly framing: Framing;
  readonly contentType: string;
  /** The negotiated compression of the answer's envelopes. */
  readonly compression: Compression | null;
  readonly compressMinBytes: number;
  /** The exchange's request id, for the trailers of an error; undefined outside a listener. */
  readonly requestId: string | undefined;
}

function answerHeaders(answer: Answer, header?: Headers): Record<string, string> {
  return nodeHeaders(header, {
    "content-type": answer.contentType,
    ...(answer.compression === null ? {} : { "grpc-encoding": answer.compression.name }),
  });
}

function answerResult(
  req: NodeServerRequest,
  res: NodeServerResponse,
  answer: Answer,
  result: UnaryResult,
  bytes: Uint8Array | ConnectError,
): void | Promise<void> {
  if (isCallOver(res)) {
    return;
  }
  if (bytes instanceof ConnectError) {
    return refuse(req, res, answer, bytes);
  }
  const trailer = grpc.setTrailerStatus(new Headers(result.trailer), undefined);
  return whenCompressed(res, answer, { flags: 0, data: bytes }, (message) =>
    writeAnswer(res, answer, answerHeaders(answer, result.header), trailer, message),
  );
}

/** As Connect: status 200, the headers, no message, and the error where the protocol puts trailers. */
function answerError(
  res: NodeServerResponse,
  answer: Answer,
  error: ConnectError,
): void | Promise<void> {
  if (isCallOver(res)) {
    return;
  }
  const trailer = grpc.setTrailerStatus(new Headers({ "grpc-status": "0" }), error);
  // In the trailers too, as the interceptors put it for a call's error; refusals made before one have it only here.
  if (answer.requestId !== undefined) {
    trailer.set("x-request-id", answer.requestId);
  }
  return writeAnswer(res, answer, answerHeaders(answer), trailer, undefined);
}

/** Status 200, the headers, the message if any, and the trailers where the protocol puts them. */
function writeAnswer(
  res: NodeServerResponse,
  answer: Answer,
  headers: Record<string, string>,
  trailer: Headers,
  message: EnvelopedMessage | undefined,
): void | Promise<void> {
  if (answer.framing.protocol === "grpc") {
    res.writeHead(200, headers);
    res.addTrailers(nodeHeaders(trailer));
    if (message === undefined) {
      res.end();
    } else {
      res.end(encodeEnvelope(message.flags, message.data));
    }
    if (!res.req.readableEnded) {
      // Answered before the body ended (a refusal): no more of it is read.
      readNoMore(res.req, true);
    }
    return;
  }
  return whenCompressed(res, answer, webTrailer(trailer), (trailerEnvelope) => {
    res.writeHead(200, headers);
    res.end(
      message === undefined
        ? encodeEnvelope(trailerEnvelope.flags, trailerEnvelope.data)
        : encodeEnvelopes(message, trailerEnvelope),
    );
    if (!res.req.readableEnded) {
      readNoMore(res.req, false);
    }
  });
}

/**
 * Runs `then` with the envelope as the answer sends it: compressed as
 * Connect does (`envelopeCompress`) when the client accepts compression and
 * the envelope is large enough, else as it is, at once (most answers: no
 * promise on the hot path). `then` is not run once the client is gone.
 */
export function whenCompressed(
  res: NodeServerResponse | ServerHttp2Stream,
  answer: Pick<Answer, "compression" | "compressMinBytes">,
  envelope: EnvelopedMessage,
  then: (envelope: EnvelopedMessage) => void | Promise<void>,
): void | Promise<void> {
  if (answer.compression === null || envelope.data.byteLength < answer.compressMinBytes) {
    return then(envelope);
  }
  return envelopeCompress(envelope, answer.compression, answer.compressMinBytes).then(
    (compressed) => (isCallOver(res) ? undefined : then(compressed)),
  );
}

/** gRPC-Web's trailers: the last envelope of the body. */
function webTrailer(trailer: Headers): EnvelopedMessage {
  return { flags: grpcWeb.trailerFlag, data: grpcWeb.trailerSerialize(trailer) };
}
