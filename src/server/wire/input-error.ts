import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * What failing to read a request's message means: the caller sent something
 * wrong. Connect says INTERNAL (HTTP 500) for a message that is not valid
 * protobuf (`parse binary: …`, connect-es' binary serialization) and for a
 * compressed gRPC envelope sent without an encoding; both are the caller's
 * bytes, so they are INVALID_ARGUMENT here, with Connect's own words. Every
 * other code a read gives (RESOURCE_EXHAUSTED over the size limit,
 * INVALID_ARGUMENT for bad JSON or a cut envelope) is kept as Connect gives it.
 */
export function inputError(reason: unknown): ConnectError {
  const error = ConnectError.from(reason);
  if (error.code !== Code.Internal) {
    return error;
  }
  const invalid = new ConnectError(
    error.rawMessage,
    Code.InvalidArgument,
    error.metadata,
    undefined,
    reason,
  );
  invalid.details.push(...error.details);
  return invalid;
}

/** The request's messages, with a failure to read one reported as `inputError` says. */
async function* readingAsInput<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (reason) {
    throw inputError(reason);
  }
}

/**
 * For the streaming methods Connect's own handler serves (health `Watch`,
 * reflection): their request messages are parsed as the call reads them,
 * inside the interceptors, so wrapping the stream here gives them the same
 * INVALID_ARGUMENT as the unary paths. Innermost, so that the interceptors
 * outside (the log line, the metrics) see the code the client gets.
 */
export const streamInputInterceptor: Interceptor = (next) => (req) =>
  req.stream ? next({ ...req, message: readingAsInput(req.message) }) : next(req);
