import type { ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { connectNodeAdapter } from "@connectrpc/connect-node";

/** The response of a call: over HTTP/1.1 or HTTP/2 as node hands it to a handler, or a raw HTTP/2 stream. */
type CallResponse = Parameters<ReturnType<typeof connectNodeAdapter>>[1] | ServerHttp2Stream;

/** The client reset the stream or the answer is over (an HTTP/2 response has no `closed`). */
export function isCallOver(res: CallResponse): boolean {
  return "stream" in res ? res.stream.destroyed : res.destroyed;
}

/**
 * A call's AbortSignal, made only if something asks for it (most calls never
 * do, and creating one costs more than the rest of a call's set-up): aborted
 * with CANCELLED when the exchange is over (the answer sent or the client
 * gone), or with DEADLINE_EXCEEDED at `deadline` (Unix ms), as Connect's
 * handlers do.
 */
export function lazyCallSignal(
  res: CallResponse,
  deadline: number | null = null,
): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller === undefined) {
      const created = new AbortController();
      controller = created;
      let timer: NodeJS.Timeout | undefined;
      const over = () => {
        clearTimeout(timer);
        created.abort(new ConnectError("the request is over", Code.Canceled));
      };
      if (isCallOver(res)) {
        over();
      } else {
        res.once("close", over);
        if (deadline !== null) {
          timer = setTimeout(
            () => created.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
            Math.max(0, deadline - Date.now()),
          );
        }
      }
    }
    return controller.signal;
  };
}
