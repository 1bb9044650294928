import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * Makes sure a client only ever sees errors we meant it to see: anything that
 * is not a ConnectError (a bug, a library error) becomes INTERNAL with a
 * neutral message, the original kept as `cause` for the log.
 */
export function errorInterceptor(): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError) {
        throw err;
      }
      throw new ConnectError("Internal error", Code.Internal, undefined, undefined, err);
    }
  };
}
