// The whole service: both listeners, with every endpoint, service and
// interceptor each one serves, and the transport they share (limits, TLS,
// where transport events are reported), built from the configuration.
//
// Tested by test/integration/edge-answers.test.ts, test/integration/operability.test.ts, test/integration/cors.test.ts, test/integration/console.test.ts, test/integration/graceful-stop.test.ts.

import { createCallGate, type OperatorLookup } from "../admin-auth/call-gate.js";
import { type ServiceLookup, serviceCredentialCheck } from "../admin-auth/service-credential.js";
import { createCheckLane } from "../check-lane/check-lane.js";
import { createCheckTally } from "../check-lane/check-tally.js";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Health } from "../gen/health/v1/health_pb.js";
import type { Logger } from "../log/logger.js";
import {
  createMetricsEndpoint,
  createServiceMetrics,
  observeRedis,
  type ServiceMetrics,
} from "../metrics/service-metrics.js";
import {
  configuredOpenApiDocument,
  createOpenApiEndpoint,
  loadLimitLocations,
  loadOpenApiDocument,
} from "../openapi/openapi-endpoint.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import { createRouteTable } from "../rest/route-table.js";
import { createRedisRunner } from "../store/redis-runner.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { type AnswerTelemetry, createAnswerTelemetry } from "./answer-telemetry.js";
import { type ApiSettings, createApiImplementations } from "./api-implementations.js";
import { apiServices } from "./api-services.js";
import type { ConsoleAssets } from "./console-assets.js";
import {
  type ClientErrorSource,
  createDualProtocolServer,
  type DualProtocolServerOptions,
} from "./dual-protocol-server.js";
import { createForwardAuthEndpoint, FORWARD_AUTH_METHOD } from "./forward-auth-endpoint.js";
import { createGrpcHealth, createGrpcReflection } from "./grpc-standard-services.js";
import { createInterceptorChain } from "./interceptor-chain.js";
import { createListenerHandler } from "./listener-handler.js";
import {
  createConsoleEndpoint,
  createCorsEndpoint,
  createHealthEndpoints,
  createMethodGuard,
} from "./plain-endpoints.js";
import { createReadinessProbe } from "./readiness.js";
import {
  credentialedServices,
  type ListenerName,
  restServedOn,
  servedService,
} from "./served-service.js";

export interface AppOptions extends ApiSettings, ListenerTransportOptions {
  /** The Redis client, read per call (a closed one is replaced). */
  redis: RedisHolder;
  /** Connections for writes that wait for replicas (redis-connections.ts). Default: `redis`. */
  redisWaitLanes?: readonly RedisHolder[];
  /** Bind address of the public listener. */
  host: string;
  /** Bind address of the internal listener (it registers keys, for operators). Default 127.0.0.1. */
  internalHost?: string;
  /** Public listener port; 0 picks a free one. */
  publicPort: number;
  /** Internal listener port; 0 picks a free one. */
  internalPort: number;
  /** Prometheus metrics, served at GET /metrics on the internal listener. Default: a new set. */
  metrics?: ServiceMetrics;
  /** What GET /metrics answers. Default: `metrics`' own registry (a worker passes the whole service's). */
  metricsText?: (metrics: ServiceMetrics) => () => Promise<string>;
  /** Browser origins allowed to call the REST API (CORS), exact. Default none: CORS is off. */
  corsOrigins?: readonly string[];
  /** Host names the internal listener answers to besides its address and loopback (INTERNAL_HOSTNAMES). Default none. */
  internalHostnames?: readonly string[];
  /** Which operator presents a secret: admin calls (UserKeyService, TokenAdminService) need one. */
  operatorOf: OperatorLookup;
  /** Which service presents a secret in X-Service-Credential: IntrospectToken and `/auth` then need one. Default: off. */
  serviceOf?: ServiceLookup;
  /** The token console's built files, served on the public listener at `/` and `/console/`. Default: none (no console). */
  console?: ConsoleAssets;
  /** OpenTelemetry spans of every exchange and Redis operation. Default: none (tracing off). */
  tracing?: CallTracing;
  /**
   * Listeners whose callers' trace context (sampled flag, `tracestate`) is
   * continued; on the others a call starts its own trace, linked to the
   * caller's. Default: the internal one (TRACE_TRUSTED_LISTENERS).
   */
  traceTrustedListeners?: readonly ListenerName[];
  /**
   * Whether the check lane answers the checks the token cache can (false:
   * every check takes the pipeline, as the parity test compares). Default true.
   */
  checkLane?: boolean;
}

export interface App {
  /** Starts both listeners; resolves with their bound ports. */
  start(): Promise<{ publicPort: number; internalPort: number }>;
  /**
   * Says NOT_SERVING at once (`/readyz` 503, every gRPC health Watch stream
   * told and ended), stops accepting, finishes in-flight calls (up to
   * `graceMs`), closes connections.
   */
  stop(graceMs?: number): Promise<void>;
}

/** Largest request message accepted on any protocol. */
const READ_MAX_BYTES = 64 * 1024;

/**
 * GET /openapi.json: the committed document (checked in and tested), with the
 * limits of this configuration set where the build found them.
 */
function openApiEndpoint(opts: AppOptions) {
  return createOpenApiEndpoint(
    configuredOpenApiDocument(
      loadOpenApiDocument(),
      {
        maxLifetimeSeconds: opts.tokenMaxLifetimeSeconds,
        rateLimitPerMinute: opts.tokenLimits.rateLimitPerMinute,
        maxActivePerUser: opts.tokenLimits.maxActivePerUser,
      },
      loadLimitLocations(),
    ),
  );
}

// The listeners' transport.

/** The limits and socket options each listener takes from the configuration, as the server declares them. */
export type ListenerLimits = Pick<
  DualProtocolServerOptions,
  "requestTimeoutMs" | "answerTimeoutMs" | "maxConnections" | "reusePort"
>;

export interface ListenerTransportOptions {
  logger: Logger;
  /** Serve both listeners over TLS (ALPN h2 and http/1.1) with this PEM certificate and key. Default: cleartext. */
  tls?: { cert: string; key: string };
  /** With `tls`: PEM CA whose client certificates name operators, asked for on the internal listener only (mutual TLS). Default none. */
  adminClientCa?: string;
  listenerLimits: ListenerLimits;
}

/** What both listeners share: limits, TLS, and where transport events are reported. */
export function listenerTransport(
  name: ListenerName,
  opts: ListenerTransportOptions,
  telemetry: AnswerTelemetry,
  metrics: ServiceMetrics,
): Omit<DualProtocolServerOptions, "handler" | "host" | "port"> {
  const clientCa = name === "internal" ? opts.adminClientCa : undefined;
  return {
    ...(opts.tls === undefined
      ? {}
      : { tls: clientCa === undefined ? opts.tls : { ...opts.tls, clientCa } }),
    ...opts.listenerLimits,
    // A reset or a broken connection harms nobody but its client: a debug line.
    // A broken protocol (node: "Stream closed with error code
    // NGHTTP2_PROTOCOL_ERROR", a stream the server reset for a frame that broke
    // HTTP/2) is a client to look at: an info line naming the NGHTTP2 code.
    onClientError: (err: Error & { code?: string }, source: ClientErrorSource) => {
      const broken = /NGHTTP2_(?:PROTOCOL|FLOW_CONTROL|FRAME_SIZE|COMPRESSION)_ERROR/.exec(
        err.message,
      );
      if (broken !== null) {
        opts.logger.info(
          { listener: name, source, err: err.code ?? "ERR_HTTP2", h2Code: broken[0] },
          "client protocol error",
        );
      } else {
        opts.logger.debug(
          { listener: name, source, err: err.code ?? err.message },
          "client connection error",
        );
      }
    },
    onServerError: (err: Error) =>
      opts.logger.warn({ listener: name, err: String(err) }, "listener error"),
    onTransportAnswer: telemetry.transportAnswer,
    onOpenConnections: (open: number) => metrics.openConnections.set({ listener: name }, open),
  };
}

/**
 * The service: the public listener serves TokenService (Connect, gRPC,
 * gRPC-Web and the REST mapping) and health checks;
 * the internal listener also serves UserKeyService, TokenAdminService,
 * TokenIntrospectionService, grpc.health.v1, gRPC server reflection, the
 * Prometheus metrics and forward-auth (`/auth`) for the edge proxy. Which
 * service is served where is said once, in api-services.ts.
 */
export function createApp(opts: AppOptions): App {
  // Aborted by stop(): /readyz and gRPC health say NOT_SERVING from then on.
  const stopping = new AbortController();
  const ready = createReadinessProbe({
    redis: opts.redis,
    stopping: stopping.signal,
    // Read when asked: the cache is made below, with the services.
    servingFromCache: () => tokenCache?.servingFromCache === true,
  });
  // Serving from cache counts as ready, as /readyz says.
  const metrics =
    opts.metrics ?? createServiceMetrics({ ready: async () => (await ready()) !== "not ready" });
  const runRedis = createRedisRunner({
    observe: observeRedis(metrics),
    ...(opts.tracing === undefined ? {} : { trace: opts.tracing.redis }),
  });
  const { impl, bearer, tokenCache, lastUse, close } = createApiImplementations({
    ...opts,
    runRedis,
    metrics,
  });
  // Checks are counted, not logged one by one; the lane answers those the
  // cache can, unless tracing is on (a traced check takes the pipeline, which
  // makes its span).
  const tally = createCheckTally({ logger: opts.logger, metrics });
  const api = apiServices(impl);
  const reflection = createGrpcReflection({ services: [...api.map((s) => s.service), Health] });
  const services = [
    ...api,
    servedService(
      Health,
      createGrpcHealth({
        ready,
        stopping: stopping.signal,
        services: api.map((s) => s.service.typeName),
      }),
      { listeners: ["internal"] },
    ),
    servedService(ReflectionV1, reflection.v1, { listeners: ["internal"] }),
    servedService(ReflectionV1Alpha, reflection.v1alpha, { listeners: ["internal"] }),
  ];

  // Off unless SERVICE_CREDENTIALS_FILE lists services.
  const serviceCheck = serviceCredentialCheck(opts.serviceOf);
  const callers = {
    operatorOf: opts.operatorOf,
    ...credentialedServices(api),
    ...(opts.serviceOf === undefined ? {} : { serviceCheck }),
  };
  const interceptors = createInterceptorChain(
    opts.tracing === undefined ? {} : { tracing: opts.tracing },
  );
  // What the interceptors do not see (plain endpoints, refusals made before a
  // call) is logged and counted per answer.
  const telemetry = createAnswerTelemetry({
    logger: opts.logger,
    metrics,
    ...(opts.tracing === undefined ? {} : { tracing: opts.tracing }),
    traceTrustedListeners: opts.traceTrustedListeners ?? ["internal"],
    tally,
  });
  const health = createHealthEndpoints(ready);
  const shared = {
    services,
    interceptors,
    telemetry,
    readMaxBytes: READ_MAX_BYTES,
    // Every call's credentials, asked before its body is read.
    gate: createCallGate(callers),
    logger: opts.logger,
  };

  // Off unless origins are listed: then it answers preflights on the REST
  // paths, matched against the gateway's own table.
  const publicRoutes = createRouteTable(
    restServedOn(services, "public").flatMap((s) => s.service.methods),
  );
  const cors =
    opts.corsOrigins === undefined || opts.corsOrigins.length === 0
      ? undefined
      : createCorsEndpoint({ origins: opts.corsOrigins, routes: publicRoutes });

  const publicServer = createDualProtocolServer({
    ...listenerTransport("public", opts, telemetry, metrics),
    host: opts.host,
    port: opts.publicPort,
    ...createListenerHandler({
      ...shared,
      name: "public",
      restRoutes: publicRoutes,
      endpoints: [
        ...(cors === undefined ? [] : [cors]),
        health,
        openApiEndpoint(opts),
        createMethodGuard({ paths: ["/healthz", "/readyz", "/openapi.json"] }),
        ...(opts.console === undefined ? [] : [createConsoleEndpoint(opts.console)]),
      ],
    }),
  });
  const internalHost = opts.internalHost ?? "127.0.0.1";
  const internalServer = createDualProtocolServer({
    ...listenerTransport("internal", opts, telemetry, metrics),
    host: internalHost,
    port: opts.internalPort,
    ...createListenerHandler({
      ...shared,
      name: "internal",
      ...(tokenCache === undefined || opts.tracing !== undefined || opts.checkLane === false
        ? {}
        : {
            lane: createCheckLane({
              cache: tokenCache,
              tally,
              lastUse,
              listener: "internal",
              ...(opts.serviceOf === undefined ? {} : { serviceCheck }),
              ...(opts.now === undefined ? {} : { now: opts.now }),
            }),
          }),
      // `/auth` answers every method: a proxy asks with the method of the request it checks.
      endpoints: [
        health,
        createMetricsEndpoint(metrics, opts.metricsText?.(metrics)),
        createForwardAuthEndpoint({
          authenticator: bearer,
          serviceCheck,
          refused: (reason) => metrics.grantRefusals.inc({ reason, method: FORWARD_AUTH_METHOD }),
        }),
        createMethodGuard({ paths: ["/healthz", "/readyz", "/metrics"] }),
      ],
      // No DNS rebinding: only its own names. `/auth` and `/auth/...` are asked by proxies,
      // which forward their client's Host (Caddy, Envoy).
      hosts: {
        names: [internalHost.toLowerCase(), ...(opts.internalHostnames ?? [])],
        anyNamePaths: ["/auth"],
      },
    }),
  });

  return {
    async start() {
      const [publicPort, internalPort] = await Promise.all([
        publicServer.listen(),
        internalServer.listen(),
      ]);
      return { publicPort, internalPort };
    },
    async stop(graceMs) {
      // Watchers hear NOT_SERVING and their streams end before the listeners close.
      stopping.abort();
      await Promise.all([publicServer.close(graceMs), internalServer.close(graceMs)]);
      tally.stop();
      await close();
    },
  };
}
