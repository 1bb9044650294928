import { Code, ConnectError } from "@connectrpc/connect";

// Replies that mean "the server cannot take this now", not "this command is wrong":
// redirections and missing scripts show up here while a cluster fails over.
const TRANSIENT_REPLY =
  /^(OOM|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MOVED|ASK|NOSCRIPT|BUSY|NOREPLICAS)\b/;

/**
 * Turns a failed Redis call into the error a client may see: UNAVAILABLE for
 * an unreachable, slow or overloaded Redis, INTERNAL for anything else. The
 * Redis error stays as `cause` for the log and never reaches the client.
 */
export function redisFailure(err: unknown): ConnectError {
  // ioredis reports an error reply of the server as a ReplyError.
  if (err instanceof Error && err.name === "ReplyError" && !TRANSIENT_REPLY.test(err.message)) {
    return new ConnectError("Internal error", Code.Internal, undefined, undefined, err);
  }
  return new ConnectError(
    "Token store unavailable, try again",
    Code.Unavailable,
    undefined,
    undefined,
    err,
  );
}

/**
 * A write that fewer replicas than REDIS_MIN_REPLICAS_ACK confirmed in time:
 * it might not survive the loss of the primary, so it is not acknowledged.
 */
export function unconfirmedWrite(): ConnectError {
  return new ConnectError("Token store could not confirm the write, try again", Code.Unavailable);
}
