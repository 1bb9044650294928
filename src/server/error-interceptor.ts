import type { Interceptor } from "@connectrpc/connect";
import { clientErrorOf } from "../token/client-error.js";

/**
 * Makes sure a client only ever sees errors we meant it to see: a store
 * failure becomes its answer (UNAVAILABLE, …) and anything else that is not a
 * ConnectError (a bug, a library error) INTERNAL with a neutral message, the
 * original kept as `cause` for the log (`clientErrorOf`).
 */
export function errorInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw clientErrorOf(err);
    }
  };
}
