import { randomUUID } from "node:crypto";
import { ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";

/** The id of the call, for the log line and the response header. */
export const requestIdKey = createContextKey("", { description: "request id" });

// An id from the caller is kept only if it is short and plain: it goes into
// logs and headers as it is.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of an exchange: the caller's `x-request-id` when it is
 * acceptable, else a new UUID. A header sent twice is not acceptable.
 */
export function settleRequestId(given: string | readonly string[] | null | undefined): string {
  return typeof given === "string" && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}

/**
 * Gives every call a request id, echoed in the `x-request-id` response header
 * (REST, Connect and gRPC, on success and on error). The listener settles the
 * id of each exchange first and puts it on the response itself (see
 * answer-telemetry.ts); this interceptor then only adds it to errors'
 * metadata, which gRPC sends as trailers. Without a listener (a router used
 * on its own) it settles the id itself.
 */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const settled = req.contextValues.get(requestIdKey);
    const id = settled === "" ? settleRequestId(req.header.get("x-request-id")) : settled;
    if (settled === "") {
      req.contextValues.set(requestIdKey, id);
    }
    try {
      const res = await next(req);
      if (settled === "") {
        res.header.set("x-request-id", id);
      }
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      error.metadata.set("x-request-id", id);
      throw error;
    }
  };
}
