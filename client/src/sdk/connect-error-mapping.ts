import { ConnectError } from "@connectrpc/connect";
import { clockOffsetOfConnectError } from "./clock-offset-connect-detail.js";
import { createdTokenIdOfConnectError } from "./created-token-connect-detail.js";
import { parseRetryAfter } from "./retry-after.js";
import { TokenApiError } from "./token-api-error.js";

/**
 * The TokenApiError of a failed Connect or gRPC call. ConnectError's `message`
 * is prefixed with the code ("[not_found] …"); `rawMessage` is the service's
 * own text, the same the REST body carries. Errors that are not ConnectErrors
 * (a signer that threw, a bug) pass through unchanged.
 */
export function fromConnectError(err: unknown): unknown {
  if (!(err instanceof ConnectError)) {
    return err;
  }
  const createdTokenId = createdTokenIdOfConnectError(err);
  return new TokenApiError(err.code, err.rawMessage, {
    retryAfterSeconds: parseRetryAfter(err.metadata.get("retry-after"), Date.now()),
    ...(createdTokenId === undefined ? {} : { createdTokenId }),
    ...clockOffsetOfConnectError(err),
    cause: err,
  });
}
