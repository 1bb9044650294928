import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createRequestValidator, type RequestValidator } from "./request-validator.js";

export interface ValidationInterceptorOptions {
  /** The validator. Default: `createRequestValidator()`. */
  validator?: RequestValidator;
}

/**
 * Checks every unary request against the buf.validate rules of its proto
 * before the implementation sees it, whichever protocol carried it (Connect,
 * gRPC, gRPC-Web, the lean gRPC path and the REST gateway share the
 * interceptors): INVALID_ARGUMENT naming every wrong field, joined by "; ".
 */
export function validationInterceptor(opts: ValidationInterceptorOptions = {}): Interceptor {
  const validator = opts.validator ?? createRequestValidator();
  return (next) => async (req) => {
    if (!req.stream) {
      const problems = validator.problems(req.method.input, req.message);
      if (problems.length > 0) {
        throw new ConnectError(problems.join("; "), Code.InvalidArgument);
      }
    }
    return next(req);
  };
}
