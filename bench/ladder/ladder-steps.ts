/** The four paths a ladder climbs, each from its floor to the service. */
export const LADDER_PATHS = ["introspect", "forward-auth", "grpc-create", "rest-create"] as const;
export type LadderPath = (typeof LADDER_PATHS)[number];

/** The layers a ladder server can switch on; each step adds one (see LADDER_STEPS). */
export type LadderLayer =
  | "floor"
  | "trailers"
  | "store"
  | "key-cache"
  | "rules"
  | "protobuf"
  | "json-protobuf"
  | "routing"
  | "request-id"
  | "validation"
  | "async-errors"
  | "log-line"
  | "metrics"
  | "close-listener"
  | "headers"
  | "compat"
  | "connect"
  | "service";

export interface LadderStep {
  readonly layer: LadderLayer;
  /** What the step adds to the one before. */
  readonly adds: string;
}

const step = (layer: LadderLayer, adds: string): LadderStep => ({ layer, adds });

const TELEMETRY = [
  step("request-id", "request id: settleRequestId of x-request-id, echoed as a response header"),
  step(
    "async-errors",
    "an async handler per call, failures mapped by clientErrorOf (errors as values)",
  ),
  step(
    "log-line",
    "one log line per answer as the service writes it (createRequestLineWriter on createLogger's batched async destination)",
  ),
  step(
    "metrics",
    "prom-client: request duration + count (createRequestSeries), Redis timings (observeRedis)",
  ),
  step(
    "close-listener",
    "log line and metrics written from the answer's 'close' event, as the service does",
  ),
  step("headers", "WHATWG Headers of the request and of the answer, as Connect builds them"),
] as const;

const GRPC_TAIL = [
  step("compat", "node:http2 compat API (request/response objects) instead of the raw stream"),
  step(
    "connect",
    "Connect's node adapter, the service's interceptors and implementation (replaces routing, decode, validation, error mapping and headers above)",
  ),
  step("service", "the service itself (dist/main.js, WORKERS=1), spawned as the bench spawns it"),
] as const;

/**
 * Each path's steps, bottom up: step i runs with the layers of steps 0..i.
 * The delta between two adjacent steps is the price of the layer the upper
 * one adds (under the same load, rounds alternating).
 */
export const LADDER_STEPS: Record<LadderPath, readonly LadderStep[]> = {
  introspect: [
    step(
      "floor",
      "raw http2 stream, token read from the request bytes, one Redis GET, status in the HEADERS (no trailers: not valid gRPC)",
    ),
    step(
      "trailers",
      "the answer as gRPC needs it: respond(waitForTrailers) + end(message) + sendTrailers (the check floor)",
    ),
    step(
      "store",
      "the real lookup: createBearerAuthenticator over createTokenStore (the lookup script, digest compare, expiry)",
    ),
    step("protobuf", "protobuf decode of the request and encode of the full answer"),
    step("routing", "route by :path, content-type and method checks"),
    step("validation", "protovalidate (createRequestValidator) on the request"),
    ...TELEMETRY,
    ...GRPC_TAIL,
  ],
  "forward-auth": [
    step("floor", "node:http, parseToken of the bearer, one Redis GET, 200 (the check floor)"),
    step(
      "store",
      "the real check: createBearerAuthenticator (lookup script, digest compare, expiry), x-user-id/x-token-id",
    ),
    step("routing", "the /auth path and method checks (requestPath, bearerTokenOf)"),
    ...TELEMETRY,
    step("service", "the service itself (dist/main.js, WORKERS=1), spawned as the bench spawns it"),
  ],
  "grpc-create": [
    step(
      "floor",
      "raw http2 stream, envelope, protobuf decode, the verify (service's verifier, keys known), one EVALSHA of the real create script, the answer; status in the HEADERS (not valid gRPC)",
    ),
    step(
      "trailers",
      "respond(waitForTrailers) + end(message) + sendTrailers: the gRPC create floor",
    ),
    step(
      "key-cache",
      "the signer's public keys from Redis (store.publicKeys) through the public-key cache",
    ),
    step("rules", "the request rules (checkCreateRequest, checkTimeWindow)"),
    step("routing", "route by :path, content-type and method checks"),
    step("validation", "protovalidate (createRequestValidator) on the request"),
    ...TELEMETRY,
    ...GRPC_TAIL,
  ],
  "rest-create": [
    step(
      "floor",
      "node:http, JSON.parse, the verify (service's verifier, keys known), one EVALSHA of the real create script, 201 with the JSON answer",
    ),
    step(
      "key-cache",
      "the signer's public keys from Redis (store.publicKeys) through the public-key cache",
    ),
    step("routing", "route by path and method (POST /user/tokens)"),
    step(
      "json-protobuf",
      "JSON body to the protobuf message (fromJsonString) and the answer back (toJsonString)",
    ),
    step("rules", "the request rules (checkCreateRequest, checkTimeWindow)"),
    step("validation", "protovalidate (createRequestValidator) on the request"),
    ...TELEMETRY,
    step("service", "the service itself (dist/main.js, WORKERS=1), spawned as the bench spawns it"),
  ],
};

export const isLadderPath = (name: string): name is LadderPath =>
  (LADDER_PATHS as readonly string[]).includes(name);
