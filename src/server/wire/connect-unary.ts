// The Connect protocol's unary calls, served off node's request and response.
//
// Tested by test/unit/server/wire/connect-handler-parity.test.ts, test/unit/server/wire/connect-handler-calls.test.ts.

import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import * as connect from "@connectrpc/connect/protocol-connect";
import { isCallOver } from "../../call/call-signal.js";
import type { UnaryResult } from "../../call/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { joined, type RequestBody, readNoMore } from "../../http/request-body.js";
import { nodeHeaders, stringOrNull } from "../../http/web-headers.js";
import { answersWithoutId, type Exchange, exchangeOf } from "../exchange.js";
import { detach } from "./answer-failure.js";
import { inputError } from "./input-error.js";
import {
  deadlineAfter,
  serializedAnswer,
  serveUnary,
  type UnaryCalls,
  type UnaryMethod,
} from "./unary-method.js";

/** How a Connect unary answer is written, as the request's headers decided it. */
interface ConnectAnswerFormat {
  /** The content type of a successful answer (an error is always JSON). */
  readonly contentType: string;
  /** The negotiated compression of the answer (`Accept-Encoding`). */
  readonly compression: Compression | null;
  readonly compressMinBytes: number;
  /** The request's exchange, which a refusal made before a call is recorded on. */
  readonly exchange: Exchange | undefined;
}

/**
 * Serves a unary call in the Connect protocol (POST, `application/proto` or
 * `application/json`): the answers of Connect's own unary handler (same
 * status, headers, `trailer-` headers, compression and error JSON;
 * test/unit/server/wire/connect-handler-parity.test.ts), without its async iterables,
 * and with a malformed message INVALID_ARGUMENT. False, before anything is
 * read, for a request Connect refuses by its method or content type (405,
 * 415) or serves as a GET.
 */
export function serveConnectUnary(
  unary: UnaryMethod,
  methods: UnaryCalls,
  req: NodeServerRequest,
  res: NodeServerResponse,
): boolean {
  const type =
    req.method === "POST"
      ? connect.parseContentType(req.headers["content-type"] ?? null)
      : undefined;
  if (type === undefined || type.stream) {
    return false;
  }
  const header = req.headers;
  const timeout = connect.parseTimeout(
    stringOrNull(header[connect.headerTimeout.toLowerCase()]),
    Number.MAX_SAFE_INTEGER,
  );
  const deadline = deadlineAfter(timeout.timeoutMs);
  const compression = compressionNegotiate(
    methods.acceptCompression,
    stringOrNull(header["content-encoding"]),
    stringOrNull(header["accept-encoding"]),
    connect.headerUnaryAcceptEncoding,
  );
  const format: ConnectAnswerFormat = {
    contentType: type.binary ? connect.contentTypeUnaryProto : connect.contentTypeUnaryJson,
    compression: compression.response,
    compressMinBytes: unary.compressMinBytes,
    exchange: exchangeOf(req),
  };
  // A caller without the credential its service needs is refused before any body byte is read.
  const admitted =
    compression.error ??
    timeout.error ??
    methods.admission(unary.method, req.headers, req.socket ?? undefined);
  if (admitted instanceof ConnectError) {
    detach(refuseConnect(res, format, admitted));
    return true;
  }
  const limit = unary.readMaxBytes;
  const declared = Number.parseInt(req.headers["content-length"] ?? "", 10);
  if (Number.isSafeInteger(declared) && declared > limit) {
    detach(
      refuseConnect(
        res,
        format,
        new ConnectError(
          `message size ${declared} is larger than configured readMaxBytes ${limit}`,
          Code.ResourceExhausted,
        ),
      ),
    );
    return true;
  }
  serveUnary(methods, {
    unary,
    exchange: format.exchange,
    source: req,
    target: res,
    deadline,
    answersAtDeadline: false,
    readMaxBytes: limit,
    announced: undefined,
    answered: () => res.headersSent,
    decode: (body) => connectInput(unary, type.binary, body, compression.request),
    call: () => methods.callOf("connect", req, res, deadline, admitted),
    answer: (result) => {
      const bytes = serializedAnswer(unary, type.binary, result);
      return bytes instanceof ConnectError
        ? refuseConnect(res, format, bytes)
        : answerResult(res, format, result, bytes);
    },
    answerError: (error) => answerError(res, format, error),
    refuse: (error) => refuseConnect(res, format, error),
  });
  return true;
}

/** The request message, from a body read within the limit and decompressed, refused in Connect's words. */
function connectInput(
  unary: UnaryMethod,
  binary: boolean,
  body: RequestBody,
  compression: Compression | null,
): Message | Promise<Message> {
  const parse = (bytes: Uint8Array): Message => {
    try {
      return unary.serialization.getI(binary).parse(bytes);
    } catch (reason) {
      throw inputError(reason);
    }
  };
  if (!body.ended) {
    throw new ConnectError(
      `message size is larger than configured readMaxBytes ${unary.readMaxBytes}`,
      Code.ResourceExhausted,
    );
  }
  const bytes = joined(body);
  return compression === null
    ? parse(bytes)
    : compression.decompress(bytes, unary.readMaxBytes).then(parse, (reason: unknown) => {
        throw inputError(reason);
      });
}

function answerResult(
  res: NodeServerResponse,
  format: ConnectAnswerFormat,
  result: UnaryResult,
  body: Uint8Array,
): Promise<void> {
  const header = new Headers(result.header);
  header.set("content-type", format.contentType);
  // trailerMux copies the headers: only worth it when there are trailers.
  const muxed = result.trailer === undefined ? header : connect.trailerMux(header, result.trailer);
  return writeConnectAnswer(res, 200, format, muxed, body);
}

/**
 * A refusal given before a call (the request's headers or bytes): recorded
 * on the exchange, which the interceptors would have done for a call's
 * error, then answered as one.
 */
function refuseConnect(
  res: NodeServerResponse,
  format: ConnectAnswerFormat,
  error: ConnectError,
): Promise<void> {
  format.exchange?.recordOutcome(error.code, error.rawMessage);
  return answerError(res, format, error);
}

/** As Connect: the code's HTTP status, the error's metadata as headers, and the error as JSON. */
function answerError(
  res: NodeServerResponse,
  format: ConnectAnswerFormat,
  error: ConnectError,
): Promise<void> {
  const header = new Headers(error.metadata);
  header.set("content-type", connect.contentTypeUnaryJson);
  return writeConnectAnswer(
    res,
    connect.codeToHttpStatus(error.code),
    format,
    header,
    connect.errorToJsonBytes(error, undefined),
  );
}

/** The one writer of Connect unary answers: compressed as negotiated, sized, and the body read no further. */
async function writeConnectAnswer(
  res: NodeServerResponse,
  status: number,
  format: ConnectAnswerFormat,
  header: Headers,
  body: Uint8Array,
): Promise<void> {
  let bytes = body;
  if (format.compression !== null && bytes.byteLength >= format.compressMinBytes) {
    bytes = await format.compression.compress(bytes);
    header.set(connect.headerUnaryEncoding, format.compression.name);
  }
  header.set(connect.headerUnaryContentLength, String(bytes.byteLength));
  if (isCallOver(res)) {
    return;
  }
  if (answersWithoutId(format.exchange)) {
    res.removeHeader("x-request-id");
  }
  res.writeHead(status, nodeHeaders(header));
  res.end(bytes);
  if (!res.req.readableEnded) {
    // Answered before the body ended (a refusal): no more of it is read.
    readNoMore(res.req, false);
  }
}
