// The one writer of an error answer that is not an RPC protocol's own: a
// google.rpc.Status JSON body (statusJson) with its HTTP status and head, on
// a node response, a raw HTTP/2 stream, or as the bytes of a whole HTTP/1.1
// response.

import { STATUS_CODES } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";
import type { NodeServerResponse } from "../http/node-handler.js";

/** An error answer: its HTTP status, and the google.rpc.Status its JSON body holds. */
export interface StatusAnswer {
  readonly status: number;
  readonly code: Code;
  readonly message: string;
  /** protojson Any values, as errorDetailsJson makes them. Default none. */
  readonly details?: readonly JsonValue[];
  /** Headers besides the body's own (`allow`, `www-authenticate`, `x-request-id`...). Default none. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * No `content-length` (HTTP/1.1 then sends the body in chunks): the
   * listener's own 404 and the CORS refusal have never sent one, and their
   * answers stay as they were. Default false.
   */
  readonly unsized?: boolean;
}

/** How an answer is written besides what it says. */
export interface WriteOptions {
  /** The head alone, for a HEAD request: `content-length` still tells the body's size. Default false. */
  readonly headOnly?: boolean;
  /** Called once the whole answer is handed to the transport. */
  readonly done?: () => void;
}

/**
 * The google.rpc.Status JSON body. `details` are protojson Any values, as
 * errorDetailsJson makes them from a ConnectError's details; default none.
 */
export function statusJson(
  code: Code,
  message: string,
  details: readonly JsonValue[] = [],
): string {
  return JSON.stringify({ code, message, details });
}

/** The JSON body of `answer`, and its head: the body's content type and length, then `answer.headers`. */
function encoded(answer: StatusAnswer): { body: string; head: Record<string, string | number> } {
  const body = statusJson(answer.code, answer.message, answer.details);
  return {
    body,
    head: {
      "content-type": "application/json",
      ...(answer.unsized === true ? {} : { "content-length": Buffer.byteLength(body) }),
      ...answer.headers,
    },
  };
}

/**
 * Writes `answer` on a response of node's HTTP/1.1 or HTTP/2 server, or on a
 * raw HTTP/2 stream: every error answer of the service that is not an RPC
 * protocol's own (REST, plain endpoints, the listener's and the transport's
 * refusals) is this one shape.
 */
export function writeStatusAnswer(
  res: NodeServerResponse | ServerHttp2Stream,
  answer: StatusAnswer,
  opts: WriteOptions = {},
): void {
  const { body, head } = encoded(answer);
  if ("respond" in res) {
    res.respond({ ":status": answer.status, ...head });
  } else {
    res.writeHead(answer.status, head);
  }
  if (opts.headOnly === true) {
    res.end(opts.done);
  } else {
    res.end(body, opts.done);
  }
}

/**
 * `answer` as a whole HTTP/1.1 response closing the connection, for when
 * there is no response object (node's 'clientError' hands over the bare socket).
 */
export function rawHttp1StatusAnswer(answer: StatusAnswer): string {
  const { body, head } = encoded(answer);
  return [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ""}`,
    ...Object.entries(head).map(([name, value]) => `${name}: ${value}`),
    "connection: close",
    "",
    body,
  ].join("\r\n");
}
