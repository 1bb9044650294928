import type { Code } from "@connectrpc/connect";
import { grpcCodeName } from "../protocol/status-code.js";

/** What a {@link TokenApiError} carries besides its code and message. */
export interface TokenApiErrorOptions {
  /** HTTP status of the answer. Known on the "rest" transport only; default undefined. */
  httpStatus?: number;
  /**
   * Seconds the service asks the caller to wait (its `retry-after`), sent with
   * RESOURCE_EXHAUSTED on every transport. Default undefined.
   */
  retryAfterSeconds?: number;
  /**
   * The id of the token that this very request created earlier: set when the
   * service answers a replay of an accepted create (ALREADY_EXISTS, reason
   * TOKEN_ALREADY_CREATED). Default undefined.
   */
  createdTokenId?: string;
  /**
   * Set on "Signature expired" (UNAUTHENTICATED, reason
   * TIMESTAMP_OUTSIDE_WINDOW): the request's timestamp minus the service's
   * time in ms (above 0 this machine's clock is ahead) and the service's time.
   * Default undefined.
   */
  clockOffsetMs?: number;
  serverTimeMs?: number;
  /** The error this one was made from (a ConnectError, a failed fetch). Default undefined. */
  cause?: unknown;
}

/**
 * A call the service refused or that could not reach it, with the same gRPC
 * code whichever transport was used. `message` is the service's own text
 * (e.g. "Invalid signature"), without a code prefix, so callers can show it.
 */
export class TokenApiError extends Error {
  override readonly name = "TokenApiError";
  /** gRPC status code; the numbers of connect's `Code` enum are the gRPC ones. */
  readonly code: Code;
  readonly httpStatus: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  /**
   * Set when this create had already been accepted (its first answer was
   * lost, say) and the service answered the replay with ALREADY_EXISTS: the id
   * of the token it created then. Its secret cannot be shown again; delete the
   * token with this id to free its name. Undefined on every other error.
   */
  readonly createdTokenId: string | undefined;
  /**
   * Set on "Signature expired": how far this request's timestamp was from the
   * service's clock, in ms; above 0 this machine's clock is ahead, below 0
   * behind. Undefined on every other error.
   */
  readonly clockOffsetMs: number | undefined;
  /** Set on "Signature expired": the service's clock when it checked, Unix ms. */
  readonly serverTimeMs: number | undefined;

  constructor(code: Code, message: string, opts: TokenApiErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.httpStatus = opts.httpStatus;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.createdTokenId = opts.createdTokenId;
    this.clockOffsetMs = opts.clockOffsetMs;
    this.serverTimeMs = opts.serverTimeMs;
  }

  /** The code's gRPC name, e.g. "ALREADY_EXISTS". */
  get codeName(): string {
    return grpcCodeName(this.code);
  }
}
