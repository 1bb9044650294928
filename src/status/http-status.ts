import { Code } from "@connectrpc/connect";

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
export function codeFromHttpStatus(status: number): Code | undefined {
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
