import { Code, ConnectError } from "@connectrpc/connect";
import { StoreError, type StoreErrorKind } from "../store/store-error.js";

/** What a client is told for each kind of store failure; the Redis error stays as `cause`, for the log. */
const STORE_FAILURES: Readonly<Record<StoreErrorKind, { message: string; code: Code }>> = {
  unavailable: { message: "Token store unavailable, try again", code: Code.Unavailable },
  "unconfirmed-write": {
    message: "Token store could not confirm the write, try again",
    code: Code.Unavailable,
  },
  rejected: { message: "Internal error", code: Code.Internal },
};

/**
 * The error a client may see for any failure of a call: a ConnectError as it
 * is (the services' own answers), a {@link StoreError} by its kind (UNAVAILABLE
 * for a Redis that cannot answer or confirm, INTERNAL for one that refused the
 * command), anything else INTERNAL with a neutral message. The one place
 * where the store's failures become client answers; what caused them is kept
 * as `cause` and never sent.
 */
export function clientErrorOf(err: unknown): ConnectError {
  if (err instanceof ConnectError) {
    return err;
  }
  if (err instanceof StoreError) {
    const { message, code } = STORE_FAILURES[err.kind];
    return new ConnectError(message, code, undefined, undefined, err.cause);
  }
  return new ConnectError("Internal error", Code.Internal, undefined, undefined, err);
}
