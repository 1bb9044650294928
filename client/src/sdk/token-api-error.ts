import type { Code } from "@connectrpc/connect";
import { codeName } from "./code-name.js";

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

  constructor(code: Code, message: string, opts: TokenApiErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.httpStatus = opts.httpStatus;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.createdTokenId = opts.createdTokenId;
  }

  /** The code's gRPC name, e.g. "ALREADY_EXISTS". */
  get codeName(): string {
    return codeName(this.code);
  }
}
