import { Code } from "@connectrpc/connect";

// The gRPC spelling of each code, as google.rpc.Code names it: the one table
// both spellings below derive from. Connect's enum names are camel case and
// spell "Canceled" the American way.
const GRPC_NAMES: Readonly<Record<Code, string>> = {
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

/**
 * A code's gRPC name, e.g. `grpcCodeName(Code.AlreadyExists)` is
 * `"ALREADY_EXISTS"`: what the SDK's errors, the CLI and the API's
 * documentation show.
 */
export function grpcCodeName(code: Code): string {
  return GRPC_NAMES[code] ?? `CODE_${code}`;
}

// Worked out once: the service's metrics label every answer with its code.
const CONNECT_NAMES = new Map<Code, string>(
  Object.values(Code)
    .filter((value): value is Code => typeof value === "number")
    .map((code) => [code, code === Code.Canceled ? "canceled" : GRPC_NAMES[code].toLowerCase()]),
);

/**
 * A code's name as the Connect protocol writes it, e.g. `"already_exists"`,
 * `"canceled"`: the code label of the service's log lines and metrics.
 * Connect's own `codeToString` is in one of its non-public entry points.
 */
export function connectCodeName(code: Code): string {
  return CONNECT_NAMES.get(code) ?? String(code);
}

/** True when `value` is one of the 16 gRPC error codes (1 to 16). */
export function isErrorCode(value: unknown): value is Code {
  return (
    typeof value === "number" && Number.isInteger(value) && value >= Code.Canceled && value <= 16
  );
}
