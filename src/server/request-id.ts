import { randomUUID } from "node:crypto";
import { ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";

/** The id of the call, for the log line and the response header. */
export const requestIdKey = createContextKey("", { description: "request id" });

// An id from the caller is kept only if it is short and plain: it goes into
// logs and headers as it is.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A new request id: the one maker of the ids the service gives, every layer's. */
export function newRequestId(): string {
  return randomUUID();
}

/**
 * The request id of an exchange: the caller's `x-request-id` when it is
 * acceptable, else a new one. A header sent twice is not acceptable.
 */
export function settleRequestId(given: string | readonly string[] | null | undefined): string {
  return acceptedRequestId(given) ?? newRequestId();
}

/** The caller's `x-request-id` when it is acceptable; undefined when none is (a check makes none). */
export function acceptedRequestId(
  given: string | readonly string[] | null | undefined,
): string | undefined {
  return typeof given === "string" && ACCEPTABLE_ID.test(given) ? given : undefined;
}

/**
 * Adds the call's request id to an error's metadata, which gRPC sends as
 * trailers. The id itself is settled once per exchange by the listener,
 * which also puts it in the `x-request-id` response header of every answer
 * (see answer-telemetry.ts).
 */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const error = ConnectError.from(err);
      const id = req.contextValues.get(requestIdKey);
      if (id !== "") {
        error.metadata.set("x-request-id", id);
      }
      throw error;
    }
  };
}
