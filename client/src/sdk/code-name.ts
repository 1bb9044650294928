import { Code } from "@connectrpc/connect";

// The gRPC spelling of each code (e.g. "ALREADY_EXISTS", "CANCELLED"), which is
// what logs, docs and other gRPC tooling show; the connect enum's own names
// are camel case and spell "Canceled" the American way.
const NAMES: Readonly<Record<Code, string>> = {
  [Code.Canceled]: "CANCELLED",
  [Code.Unknown]: "UNKNOWN",
  [Code.InvalidArgument]: "INVALID_ARGUMENT",
  [Code.DeadlineExceeded]: "DEADLINE_EXCEEDED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.AlreadyExists]: "ALREADY_EXISTS",
  [Code.PermissionDenied]: "PERMISSION_DENIED",
  [Code.ResourceExhausted]: "RESOURCE_EXHAUSTED",
  [Code.FailedPrecondition]: "FAILED_PRECONDITION",
  [Code.Aborted]: "ABORTED",
  [Code.OutOfRange]: "OUT_OF_RANGE",
  [Code.Unimplemented]: "UNIMPLEMENTED",
  [Code.Internal]: "INTERNAL",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DataLoss]: "DATA_LOSS",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
};

/** The gRPC name of a status code, e.g. `codeName(Code.AlreadyExists)` is `"ALREADY_EXISTS"`. */
export function codeName(code: Code): string {
  return NAMES[code] ?? `CODE_${code}`;
}

/** True when `value` is one of the 16 gRPC error codes (1 to 16). */
export function isErrorCode(value: unknown): value is Code {
  return (
    typeof value === "number" && Number.isInteger(value) && value >= Code.Canceled && value <= 16
  );
}
