import type { Interceptor } from "@connectrpc/connect";
import { bearerAuthorization } from "./bearer-authorization.js";

/**
 * A Connect interceptor presenting an operator's secret on every call
 * (`authorization: Bearer <secret>`), as the admin RPCs require; none when
 * there is no secret, so that the service says what to send.
 */
export function operatorAuthorization(secret: string | undefined): Interceptor[] {
  if (secret === undefined) {
    return [];
  }
  const value = bearerAuthorization(secret);
  return [
    (next) => (req) => {
      req.header.set("authorization", value);
      return next(req);
    },
  ];
}
