import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import { Code } from "@connectrpc/connect";
import { statusJson } from "../status/status-json.js";

/**
 * An answer the transport layer gives by itself, before (or instead of) the
 * request handler: a request it could not parse, too large headers, a
 * request not received in time.
 */
export interface TransportAnswer {
  /** The HTTP status sent. */
  status: number;
  /** The code in the JSON body. */
  code: Code;
  /** The `x-request-id` sent with it: a new UUID, or the caller's acceptable one where a request was read (CONNECT). */
  requestId: string;
  /** Why, for the log: the error code Node gave, e.g. `HPE_INVALID_METHOD`. */
  reason: string;
  /** The protocol of the connection. */
  protocol: "http1" | "http2";
}

/** What a refusal of the transport layer says: HTTP status, code and message. */
export interface TransportRefusal {
  status: number;
  code: Code;
  message: string;
}

export const REQUEST_TIMEOUT: TransportRefusal = {
  status: 408,
  code: Code.DeadlineExceeded,
  message: "request not received in time",
};

// Node's HTTP/1 parser errors, answered as Node itself would (same statuses).
const HEADERS_TOO_LARGE: TransportRefusal = {
  status: 431,
  code: Code.ResourceExhausted,
  message: "request headers too large",
};
const CHUNK_EXTENSIONS_TOO_LARGE: TransportRefusal = {
  status: 413,
  code: Code.ResourceExhausted,
  message: "chunk extensions too large",
};
/** Node answers an `Expect` other than `100-continue` itself. */
export const EXPECTATION_FAILED: TransportRefusal = {
  status: 417,
  code: Code.FailedPrecondition,
  message: "only the expectation 100-continue is supported",
};
/** CONNECT asks for a tunnel: the service is no proxy (501, as for a method no resource supports). */
export const CONNECT_REFUSED: TransportRefusal = {
  status: 501,
  code: Code.Unimplemented,
  message: "CONNECT is not supported: this service is not a proxy",
};
const BAD_REQUEST: TransportRefusal = {
  status: 400,
  code: Code.InvalidArgument,
  message: "malformed HTTP request",
};

/** The refusal for an error of Node's HTTP/1 server ('clientError'). */
export function refusalOfClientError(errorCode: string | undefined): TransportRefusal {
  switch (errorCode) {
    case "HPE_HEADER_OVERFLOW":
      return HEADERS_TOO_LARGE;
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return CHUNK_EXTENSIONS_TOO_LARGE;
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return REQUEST_TIMEOUT;
    default:
      return BAD_REQUEST;
  }
}

/** A new request id for an answer of the transport layer. */
export function newRequestId(): string {
  return randomUUID();
}

/** The JSON body of a refusal: the shape of every other error answer. */
export function refusalBody(refusal: TransportRefusal): string {
  return statusJson(refusal.code, refusal.message);
}

/**
 * A whole HTTP/1.1 response closing the connection, for when there is no
 * response object (Node's 'clientError' hands over the bare socket).
 */
export function rawHttp1Refusal(refusal: TransportRefusal, requestId: string): string {
  const body = refusalBody(refusal);
  return [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ""}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    "connection: close",
    "",
    body,
  ].join("\r\n");
}
