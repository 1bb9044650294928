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

  constructor(code: Code, message: string, opts: TokenApiErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.httpStatus = opts.httpStatus;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** The code's gRPC name, e.g. "ALREADY_EXISTS". */
  get codeName(): string {
    return codeName(this.code);
  }
}
