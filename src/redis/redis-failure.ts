// Replies that mean "the server cannot take this now", not "this command is wrong":
// redirections and missing scripts show up here while a cluster fails over, and
// UNBLOCKED ends a WAIT on a primary made a replica (a Sentinel failover).
const TRANSIENT_REPLY =
  /^(OOM|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MOVED|ASK|NOSCRIPT|BUSY|NOREPLICAS|UNBLOCKED)\b/;

/**
 * Whether a failed Redis call says nothing about the command itself: an
 * unreachable, slow or overloaded Redis (connection errors, timeouts, the
 * transient replies above), so the same call may succeed later. False for an
 * error reply that a retry would get again (a wrong command, a script error).
 */
export function isTransientRedisFailure(err: unknown): boolean {
  // ioredis reports an error reply of the server as a ReplyError.
  const isReply = err instanceof Error && err.name === "ReplyError";
  return !isReply || TRANSIENT_REPLY.test(err.message);
}

/**
 * Whether a reply sends the command to another node of a Redis Cluster: the
 * key's slot has moved (MOVED) or is moving (ASK). A connection to one node
 * cannot follow it; the cluster client can.
 */
export function isClusterRedirect(err: unknown): boolean {
  return err instanceof Error && err.name === "ReplyError" && /^(MOVED|ASK) /.test(err.message);
}

/** Connection failures that say the server is not there to answer (not a connection that just dropped). */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** Replies and messages of a Redis that is there but cannot answer, or of none to be found. */
const UNREACHABLE_MESSAGE =
  /^(LOADING|MASTERDOWN|CLUSTERDOWN)\b|^Command timed out|^no answer within|^All sentinels are unreachable|^Failed to refresh slots cache/;

/**
 * Whether a failure says Redis cannot answer now: a connect refused or
 * timed out, a command or read past its bound, a server loading or without
 * its primary, no sentinel to ask (issue 43's grace starts on one). False
 * for a connection that merely dropped, whose commands fail at once
 * ("Connection is closed", "Stream isn't writeable") while it reconnects to
 * a Redis that is up. Looks through `cause` (the store's StoreError).
 */
export function isRedisUnreachable(err: unknown): boolean {
  return someCause(err, (e) => {
    const code = (e as Error & { code?: unknown }).code;
    return (
      (typeof code === "string" && UNREACHABLE_CODES.has(code)) ||
      UNREACHABLE_MESSAGE.test(e.message)
    );
  });
}

/**
 * Whether a command failed because its connection was not open (ioredis
 * with no offline queue, while it reconnects), or closed under it while it
 * waited for its reply (with `maxRetriesPerRequest: 0`, ioredis fails it at
 * the close with a MaxRetriesPerRequestError): it says nothing of whether
 * Redis is up. Looks through `cause`.
 */
export function isNotConnected(err: unknown): boolean {
  return someCause(
    err,
    (e) =>
      e.name === "MaxRetriesPerRequestError" ||
      /^(Stream isn't writeable|Connection is closed)/.test(e.message),
  );
}

/** Whether `err` or one of its first causes passes `test`. */
function someCause(err: unknown, test: (e: Error) => boolean): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (test(e)) {
      return true;
    }
  }
  return false;
}
