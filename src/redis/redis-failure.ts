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
