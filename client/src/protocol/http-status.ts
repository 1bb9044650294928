import { Code } from "@connectrpc/connect";

// Three tables between codes and HTTP statuses, side by side because they look
// alike and differ on purpose. `httpStatusFromCode` is the service's REST
// mapping; `restCodeFromHttpStatus` is its inverse, which labels an answer that
// has only an HTTP status (404 is NOT_FOUND, as the REST API answers an unknown
// path). `connectCodeFromHttpStatus` is the Connect protocol's table for an HTTP
// error whose body is not a status (a proxy's 502 page): a client cannot tell
// there what failed, so 404 is UNIMPLEMENTED, 400 INTERNAL and the rest UNKNOWN.

/**
 * The HTTP status the REST gateway answers for a gRPC status code. The single
 * place of this mapping, so the REST API and its documentation cannot drift.
 */
export function httpStatusFromCode(code: Code): number {
  switch (code) {
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.OutOfRange:
      return 400;
    case Code.Unauthenticated:
      return 401;
    case Code.PermissionDenied:
      return 403;
    case Code.NotFound:
      return 404;
    case Code.AlreadyExists:
    case Code.Aborted:
      return 409;
    case Code.ResourceExhausted:
      return 429;
    case Code.Canceled:
      return 499;
    case Code.Unimplemented:
      return 501;
    case Code.Unavailable:
      return 503;
    case Code.DeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

/**
 * The code of an answer that has only an HTTP status (a plain endpoint, or a
 * refusal made before any code was chosen); undefined for a success. The
 * inverse of `httpStatusFromCode`, plus the statuses the HTTP layer answers
 * with: 405 and 505 are UNIMPLEMENTED, 413 and 415 INVALID_ARGUMENT, as the
 * REST gateway answers them.
 */
export function restCodeFromHttpStatus(status: number): Code | undefined {
  switch (status) {
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.NotFound;
    case 405:
    case 501:
    case 505:
      return Code.Unimplemented;
    case 408:
    case 504:
      return Code.DeadlineExceeded;
    case 409:
      return Code.AlreadyExists;
    case 429:
      return Code.ResourceExhausted;
    case 499:
      return Code.Canceled;
    case 503:
      return Code.Unavailable;
    default:
      if (status < 400) {
        return undefined;
      }
      return status < 500 ? Code.InvalidArgument : Code.Internal;
  }
}

/**
 * The code of an HTTP error whose body is not the service's status JSON (a
 * proxy's 502 page, say). The Connect protocol's table for such answers, so
 * "rest" and "connect" report an unreadable failure alike; only 408 (a
 * proxy's timeout) is DEADLINE_EXCEEDED here, UNKNOWN in Connect's.
 */
export function connectCodeFromHttpStatus(status: number): Code {
  switch (status) {
    case 400:
      return Code.Internal;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 408:
      return Code.DeadlineExceeded;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}
