import { Code } from "@connectrpc/connect";

/**
 * The code of an HTTP error whose body is not the service's status JSON (a
 * proxy's 502 page, say). Same table as the Connect protocol uses for such
 * answers, so "rest" and "connect" report an unreadable failure alike.
 */
export function codeFromHttpStatus(status: number): Code {
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
