import { Code } from "@connectrpc/connect";
import type { StatusAnswer } from "../status/status-answer.js";

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

/** A refusal, in one line per kind. */
function transportRefusal(status: number, code: Code, message: string): TransportRefusal {
  return { status, code, message };
}

export const REQUEST_TIMEOUT = transportRefusal(
  408,
  Code.DeadlineExceeded,
  "request not received in time",
);

// Node's HTTP/1 parser errors, answered as Node itself would (same statuses).
const HEADERS_TOO_LARGE = transportRefusal(
  431,
  Code.ResourceExhausted,
  "request headers too large",
);
const CHUNK_EXTENSIONS_TOO_LARGE = transportRefusal(
  413,
  Code.ResourceExhausted,
  "chunk extensions too large",
);
/** Node answers an `Expect` other than `100-continue` itself. */
export const EXPECTATION_FAILED = transportRefusal(
  417,
  Code.FailedPrecondition,
  "only the expectation 100-continue is supported",
);
/** CONNECT asks for a tunnel: the service is no proxy (501, as for a method no resource supports). */
export const CONNECT_REFUSED = transportRefusal(
  501,
  Code.Unimplemented,
  "CONNECT is not supported: this service is not a proxy",
);
const BAD_REQUEST = transportRefusal(400, Code.InvalidArgument, "malformed HTTP request");

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

/** The service's JSON error answer of `refusal`, with its request id. */
export function refusalAnswer(refusal: TransportRefusal, requestId: string): StatusAnswer {
  return { ...refusal, headers: { "x-request-id": requestId } };
}
