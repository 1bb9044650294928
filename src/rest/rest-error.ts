import type { JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { httpStatusFromCode } from "@perps/token-client/protocol";

/**
 * An error the gateway answers as a google.rpc.Status JSON body. The HTTP
 * status is the mapped gRPC code unless the HTTP layer needs its own
 * (404 unknown path, 405, 413, 415).
 */
export class RestError extends Error {
  override readonly name = "RestError";
  readonly code: Code;
  readonly httpStatus: number;
  /** Extra response headers, e.g. `allow` on a 405. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body's `details`: protojson Any values (see errorDetailsJson). */
  readonly details: readonly JsonValue[];
  /** The call's own error, which the interceptors saw; false for the gateway's refusals. */
  readonly ofCall: boolean;

  constructor(
    code: Code,
    message: string,
    opts: {
      httpStatus?: number;
      headers?: Record<string, string>;
      /** Default: none. */
      details?: readonly JsonValue[];
      /** Default false. */
      ofCall?: boolean;
    } = {},
  ) {
    super(message);
    this.code = code;
    this.httpStatus = opts.httpStatus ?? httpStatusFromCode(code);
    this.headers = opts.headers ?? {};
    this.details = opts.details ?? [];
    this.ofCall = opts.ofCall ?? false;
  }
}

/** Shorthand for the most common gateway error: a malformed REST request. */
export function invalidArgument(message: string): RestError {
  return new RestError(Code.InvalidArgument, message);
}
