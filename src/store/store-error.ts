/** Why the store could not do what it was asked. */
export type StoreErrorKind =
  /** Redis cannot answer now (unreachable, slow, overloaded, failing over): a retry may succeed. */
  | "unavailable"
  /**
   * Fewer replicas than required confirmed a write in time: it might not
   * survive the loss of the primary, so it is not acknowledged (a create is
   * rolled back first).
   */
  | "unconfirmed-write"
  /** Redis refused the command in a way a retry would not change: a defect, not load. */
  | "rejected";

export interface StoreErrorOptions {
  /** The Redis failure behind it, for the log; never shown to a client. Default: none. */
  cause?: unknown;
}

/**
 * The one error the store throws for its own trouble. Expected outcomes
 * (a name taken, a replay, …) are values, not errors; what a client is told
 * for each kind is decided above the store.
 */
export class StoreError extends Error {
  override readonly name = "StoreError";
  readonly kind: StoreErrorKind;

  constructor(kind: StoreErrorKind, opts: StoreErrorOptions = {}) {
    super(`token store: ${kind}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
  }
}
