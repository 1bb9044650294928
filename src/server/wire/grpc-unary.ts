// gRPC and gRPC-Web unary calls, served off node's request and response.
//
// Tested by test/unit/server/wire/connect-handler-parity.test.ts, test/unit/server/wire/connect-handler-calls.test.ts, test/integration/read-limits.test.ts.

import { ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  compressionNegotiate,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { stringOrNull } from "../../http/web-headers.js";
import { rpcProtocol } from "../call-protocol.js";
import { exchangeOf } from "../exchange.js";
import { detach } from "./answer-failure.js";
import { readEnvelopedInput } from "./enveloped-input.js";
import { type GrpcAnswerFormat, grpcAnswers, refuseGrpc } from "./grpc-answer.js";
import {
  deadlineAfter,
  ENVELOPE_HEAD_BYTES,
  serveUnary,
  type UnaryCalls,
  type UnaryMethod,
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
 * words; test/unit/server/wire/connect-handler-parity.test.ts), without their async
 * iterable pipeline, and with a malformed message INVALID_ARGUMENT. False,
 * before anything is read, for a request whose content type Connect refuses.
 */
export function serveGrpcUnary(
  framing: Framing,
  unary: UnaryMethod,
  methods: UnaryCalls,
  req: NodeServerRequest,
  res: NodeServerResponse,
): boolean {
  const headers = headersOf(framing, methods, unary.compressMinBytes, req);
  if (headers === undefined) {
    return false;
  }
  const { type, format, compression, deadline } = headers;
  // A caller without the credential its service needs is refused before any body byte is read.
  const admitted =
    headers.refusal ?? methods.admission(unary.method, req.headers, req.socket ?? undefined);
  if (admitted instanceof ConnectError) {
    detach(refuseGrpc(res, format, admitted));
    return true;
  }
  serveUnary(methods, {
    unary,
    exchange: format.exchange,
    source: req,
    target: res,
    deadline,
    answersAtDeadline: true,
    readMaxBytes: unary.readMaxBytes + ENVELOPE_HEAD_BYTES,
    announced: unary.announced,
    answered: () => res.headersSent,
    decode: (body) =>
      readEnvelopedInput(body, req, {
        parse: unary.serialization.getI(type.binary),
        readMaxBytes: unary.readMaxBytes,
        compression: compression.request,
        endFlag: framing.endFlag,
      }),
    call: () => methods.callOf(framing.protocol, req, res, deadline, admitted),
    ...grpcAnswers(res, format, unary, type.binary),
  });
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
  methods: UnaryCalls,
  req: NodeServerRequest,
  res: NodeServerResponse,
): boolean {
  const headers = headersOf(framing, methods, DEFAULT_COMPRESS_MIN_BYTES, req);
  if (headers?.refusal === undefined) {
    return false;
  }
  detach(refuseGrpc(res, headers.format, headers.refusal));
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
  readonly format: GrpcAnswerFormat;
  readonly compression: { request: Compression | null };
  readonly deadline: number | null;
  /** The refusal of a bad `grpc-encoding` or `grpc-timeout`, as Connect words it. */
  readonly refusal: ConnectError | undefined;
}

/** The call's headers; undefined for a request Connect refuses by its method or content type (405, 415). */
function headersOf(
  framing: Framing,
  methods: UnaryCalls,
  compressMinBytes: number,
  req: NodeServerRequest,
): CallHeaders | undefined {
  const type = req.method === "POST" ? framing.codec(req.headers["content-type"]) : undefined;
  if (type === undefined) {
    return undefined;
  }
  const header = req.headers;
  const timeout = grpc.parseTimeout(stringOrNull(header["grpc-timeout"]), Number.MAX_SAFE_INTEGER);
  const compression = compressionNegotiate(
    methods.acceptCompression,
    stringOrNull(header["grpc-encoding"]),
    stringOrNull(header["grpc-accept-encoding"]),
    grpc.headerAcceptEncoding,
  );
  return {
    type,
    format: {
      protocol: framing.protocol,
      contentType: type.binary ? framing.contentTypeProto : framing.contentTypeJson,
      text: false,
      compression: compression.response,
      compressMinBytes,
      exchange: exchangeOf(req),
    },
    compression,
    deadline: deadlineAfter(timeout.timeoutMs),
    refusal: compression.error ?? timeout.error,
  };
}
