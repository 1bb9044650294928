import { randomUUID } from "node:crypto";
import { ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";

/** The id of the call, for the log line and the response header. */
export const requestIdKey = createContextKey("", { description: "request id" });

// An id from the caller is kept only if it is short and plain: it goes into
// logs and headers as it is.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every call a request id: the caller's `x-request-id` when it is
 * acceptable, else a new UUID; echoed in the `x-request-id` response header
 * (REST, Connect and gRPC, on success and on error).
 */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const given = req.header.get("x-request-id");
    const id = given !== null && ACCEPTABLE_ID.test(given) ? given : randomUUID();
    req.contextValues.set(requestIdKey, id);
    try {
      const res = await next(req);
      res.header.set("x-request-id", id);
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      error.metadata.set("x-request-id", id);
      throw error;
    }
  };
}
