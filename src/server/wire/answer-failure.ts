import { Code, ConnectError } from "@connectrpc/connect";
import { isCallOver } from "../../call/call-signal.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import { exchangeOf } from "../exchange.js";

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
 * failure is an answer): told to the exchange (its cause is logged), then an
 * empty 500, or the end of the stream if the answer has begun. Nothing to do
 * once the client is gone.
 */
export function failAnswer(req: NodeServerRequest, res: NodeServerResponse, reason: unknown): void {
  if (isCallOver(res)) {
    return;
  }
  exchangeOf(req)?.answers(Code.Internal, String(reason));
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(500);
  res.end();
}
