import { createContextKey } from "@connectrpc/connect";

/**
 * Set on every call the REST gateway makes, so that interceptors (the request
 * log) can tell a REST call from a Connect call: both reach the handler as
 * Connect unary calls.
 */
export const restCallKey = createContextKey(false, {
  description: "call came through the REST gateway",
});
