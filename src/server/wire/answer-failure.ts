import type { ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { isCallOver } from "../../call/call-signal.js";
import type { NodeServerResponse } from "../../http/node-handler.js";
import type { Exchange } from "../exchange.js";

/** What a call's failure is answered as: a ConnectError as it is, anything else INTERNAL, as Connect does. */
export function callError(reason: unknown): ConnectError {
  return reason instanceof ConnectError
    ? reason
    : new ConnectError("internal error", Code.Internal, undefined, undefined, reason);
}

/** Lets an answer being written finish on its own: if it fails, the client is gone and nothing is left to answer. */
export function detach(answering: void | Promise<void>): void {
  if (answering instanceof Promise) {
    answering.catch(() => {});
  }
}

/**
 * A failure of the service itself while answering, not of a call (a call's
 * failure is an answer): recorded on the exchange (its cause is logged), then
 * an empty 500. If the answer has begun, it is cut so that the client can
 * tell: HTTP/2's stream reset with INTERNAL_ERROR, HTTP/1.1's connection
 * closed before the body's end. (A bare destroy resets with NO_ERROR, and
 * node's close(INTERNAL_ERROR) ends the stream before its reset: both read as
 * a complete answer.) Nothing to do once the client is gone. The one empty
 * 500 of the service, on node's responses and on raw HTTP/2 streams alike.
 */
export function failAnswer(
  to: NodeServerResponse | ServerHttp2Stream,
  exchange: Exchange | undefined,
  reason: unknown,
): void {
  const stream = "respond" in to;
  if (stream ? to.destroyed : isCallOver(to)) {
    return;
  }
  exchange?.recordOutcome(Code.Internal, String(reason));
  if (to.headersSent) {
    if (stream || "stream" in to) {
      // Destroyed with an error, node resets with INTERNAL_ERROR. The error is
      // then emitted on the stream: handled here, whoever else listens.
      const target = stream ? to : to.stream;
      target.once("error", () => {});
      target.destroy(new Error("the service failed while answering"));
    } else {
      to.destroy();
    }
  } else if (stream) {
    const head: Record<string, string | number> = { ":status": 500 };
    if (exchange !== undefined && exchange.requestId !== "") {
      head["x-request-id"] = exchange.requestId;
    }
    to.respond(head, { endStream: true });
  } else {
    to.writeHead(500);
    to.end();
  }
}
