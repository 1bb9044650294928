import { Code, ConnectError } from "@connectrpc/connect";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import * as connect from "@connectrpc/connect/protocol-connect";
import { isCallOver } from "../../call/call-signal.js";
import type { UnaryResult } from "../../call/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { joined, readNoMore, readRequestBody } from "../../http/request-body.js";
import { nodeHeaders, stringOrNull } from "../../http/web-headers.js";
import { exchangeOf } from "../exchange.js";
import { callError, detach, failAnswer } from "./answer-failure.js";
import { inputError } from "./input-error.js";
import {
  deadlineAfter,
  serializedAnswer,
  type UnaryMethod,
  type UnaryServing,
} from "./unary-method.js";

/** What a Connect unary answer is written with. */
interface Answer {
  /** The content type of a successful answer (an error is always JSON). */
  readonly contentType: string;
  /** The negotiated compression of the answer (`Accept-Encoding`). */
  readonly compression: Compression | null;
  readonly compressMinBytes: number;
}

/**
 * Serves a unary call in the Connect protocol (POST, `application/proto` or
 * `application/json`): the answers of Connect's own unary handler (same
 * status, headers, `trailer-` headers, compression and error JSON;
 * test/unit/server/wire/wire-parity.test.ts), without its async iterables,
 * and with a malformed message INVALID_ARGUMENT. False, before anything is
 * read, for a request Connect refuses by its method or content type (405,
 * 415) or serves as a GET.
 */
export function serveConnectUnary(
  served: UnaryMethod,
  serving: UnaryServing,
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
    serving.acceptCompression,
    stringOrNull(header["content-encoding"]),
    stringOrNull(header["accept-encoding"]),
    connect.headerUnaryAcceptEncoding,
  );
  const answer: Answer = {
    contentType: type.binary ? connect.contentTypeUnaryProto : connect.contentTypeUnaryJson,
    compression: compression.response,
    compressMinBytes: served.compressMinBytes,
  };
  const refused = (error: ConnectError) => {
    exchangeOf(req)?.answers(error.code, error.rawMessage);
    return answerError(res, answer, error);
  };
  // A caller without the credential its service needs is refused before any body byte is read.
  const refusal =
    compression.error ??
    timeout.error ??
    serving.admit(served.method, req.headers, req.socket ?? undefined);
  if (refusal !== undefined) {
    detach(refused(refusal));
    return true;
  }
  readInput(served, req, compression.request)
    .then((bytes) => served.serialization.getI(type.binary).parse(bytes))
    .then(
      (input) =>
        serving.invoke("connect", served.method, input, req, res, deadline).then(
          (result) =>
            answerResult(req, res, answer, result, serializedAnswer(served, type.binary, result)),
          (reason: unknown) => answerError(res, answer, callError(reason)),
        ),
      (reason: unknown) => refused(inputError(reason)),
    )
    .catch((reason: unknown) => failAnswer(req, res, reason));
  return true;
}

/** The request message's bytes, within the limit and decompressed, refused in Connect's words. */
async function readInput(
  served: UnaryMethod,
  req: NodeServerRequest,
  compression: Compression | null,
): Promise<Uint8Array> {
  const limit = served.readMaxBytes;
  const declared = Number.parseInt(req.headers["content-length"] ?? "", 10);
  if (Number.isSafeInteger(declared) && declared > limit) {
    throw new ConnectError(
      `message size ${declared} is larger than configured readMaxBytes ${limit}`,
      Code.ResourceExhausted,
    );
  }
  const body = await readRequestBody(req, limit);
  if (!body.ended) {
    throw new ConnectError(
      `message size is larger than configured readMaxBytes ${limit}`,
      Code.ResourceExhausted,
    );
  }
  const bytes = joined(body);
  return compression === null ? bytes : compression.decompress(bytes, limit);
}

async function answerResult(
  req: NodeServerRequest,
  res: NodeServerResponse,
  answer: Answer,
  result: UnaryResult,
  body: Uint8Array | ConnectError,
): Promise<void> {
  if (body instanceof ConnectError) {
    exchangeOf(req)?.answers(body.code, body.rawMessage);
    return answerError(res, answer, body);
  }
  const header = new Headers(result.header);
  header.set("content-type", answer.contentType);
  // trailerMux copies the headers: only worth it when there are trailers.
  const muxed = result.trailer === undefined ? header : connect.trailerMux(header, result.trailer);
  return send(res, 200, answer, muxed, body);
}

/** As Connect: the code's HTTP status, the error's metadata as headers, and the error as JSON. */
function answerError(res: NodeServerResponse, answer: Answer, error: ConnectError): Promise<void> {
  const header = new Headers({ "content-type": connect.contentTypeUnaryJson });
  error.metadata.forEach((value, name) => {
    header.set(name, value);
  });
  return send(
    res,
    connect.codeToHttpStatus(error.code),
    answer,
    header,
    connect.errorToJsonBytes(error, undefined),
  );
}

async function send(
  res: NodeServerResponse,
  status: number,
  answer: Answer,
  header: Headers,
  body: Uint8Array,
): Promise<void> {
  let bytes = body;
  if (answer.compression !== null && bytes.byteLength >= answer.compressMinBytes) {
    bytes = await answer.compression.compress(bytes);
    header.set(connect.headerUnaryEncoding, answer.compression.name);
  }
  header.set(connect.headerUnaryContentLength, String(bytes.byteLength));
  if (isCallOver(res)) {
    return;
  }
  res.writeHead(status, nodeHeaders(header));
  res.end(bytes);
  if (!res.req.readableEnded) {
    // Answered before the body ended (a refusal): no more of it is read.
    readNoMore(res.req, false);
  }
}
