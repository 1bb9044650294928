import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  Code,
  type ConnectRouter,
  createServiceImplSpec,
  type Interceptor,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import { adminAuthInterceptor, type OperatorLookup } from "../admin-auth/admin-auth-interceptor.js";
import { callerKey, callerOf, withCaller } from "../admin-auth/caller-context.js";
import { serviceCredentialCheck } from "../admin-auth/service-credential.js";
import { serviceCredentialInterceptor } from "../admin-auth/service-credential-interceptor.js";
import { createEd25519Verifier } from "../crypto/ed25519-verifier.js";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { Health } from "../gen/health/v1/health_pb.js";
import { TokenAdminService } from "../gen/perps/token/v1/token_admin_pb.js";
import { TokenIntrospectionService } from "../gen/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "../gen/perps/token/v1/token_pb.js";
import { UserKeyService } from "../gen/perps/token/v1/user_key_pb.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { Logger } from "../log/logger.js";
import { createMetricsEndpoint } from "../metrics/metrics-endpoint.js";
import {
  createServiceMetrics,
  observeRedis,
  type ServiceMetrics,
} from "../metrics/service-metrics.js";
import { loadOpenApiDocument } from "../openapi/committed-document.js";
import { configuredOpenApiDocument } from "../openapi/configured-document.js";
import { loadLimitLocations } from "../openapi/limit-locations.js";
import { createOpenApiEndpoint } from "../openapi/openapi-endpoint.js";
import { DEFAULT_SERVICE_LIMITS } from "../openapi/service-limits.js";
import type { RedisClient } from "../redis/redis-client.js";
import { createRestGateway } from "../rest/rest-gateway.js";
import { createRouteTable } from "../rest/route-table.js";
import { statusJson } from "../status/status-json.js";
import { createPublicKeyStore } from "../store/public-key-store.js";
import { createRedisCall } from "../store/redis-call.js";
import { createTokenStore } from "../store/token-store.js";
import { createBearerAuthenticator } from "../token/bearer-authenticator.js";
import { createTokenAdminService } from "../token/token-admin-service.js";
import { createTokenIntrospectionService } from "../token/token-introspection-service.js";
import { createTokenService } from "../token/token-service.js";
import type { CallTracing } from "../tracing/call-tracing.js";
import { createUserKeyService } from "../user-key/user-key-service.js";
import { validationInterceptor } from "../validation/validation-interceptor.js";
import { createAnswerTelemetry } from "./answer-telemetry.js";
import { createAuditLog } from "./audit-line.js";
import { callTelemetryInterceptor } from "./call-telemetry-interceptor.js";
import type { ConsoleAssets } from "./console-assets.js";
import { createConsoleEndpoint } from "./console-endpoint.js";
import { createCorsEndpoint } from "./cors-endpoint.js";
import {
  type ClientErrorSource,
  createDualProtocolServer,
  type DualProtocolServerOptions,
} from "./dual-protocol-server.js";
import { errorInterceptor } from "./error-interceptor.js";
import { exchangeOf } from "./exchange.js";
import { createForwardAuthEndpoint } from "./forward-auth-endpoint.js";
import { createGrpcHealth } from "./grpc-health.js";
import { createGrpcReflection } from "./grpc-reflection.js";
import { createHealthEndpoints } from "./health-endpoints.js";
import { createHostGuard, type HostGuardOptions, hostAllowed, hostOf } from "./host-guard.js";
import { createMethodGuard } from "./method-guard.js";
import { createReadinessProbe } from "./readiness.js";
import { requestIdInterceptor } from "./request-id.js";
import { traceContextInterceptor } from "./trace-context-interceptor.js";
import { createConnectHandler } from "./wire/connect-handler.js";

export interface AppOptions {
  redis: RedisClient;
  logger: Logger;
  /** Bind address of the public listener. */
  host: string;
  /** Bind address of the internal listener (it registers keys, for operators). Default 127.0.0.1. */
  internalHost?: string;
  /** Public listener port; 0 picks a free one. */
  publicPort: number;
  /** Internal listener port; 0 picks a free one. */
  internalPort: number;
  /** Longest token lifetime in seconds. */
  tokenMaxLifetimeSeconds: number;
  /** Most live tokens per user. Default 1000. */
  tokenMaxActivePerUser?: number;
  /** Signed create/delete calls per user per minute. Default 60. */
  tokenRateLimitPerMinute?: number;
  /** Replicas that must confirm each write (Redis WAIT). Default 0. */
  redisMinReplicasAck?: number;
  /** How long to wait for those confirmations. Default 500 ms. */
  redisWaitTimeoutMs?: number;
  /** Server time in Unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Prometheus metrics, served at GET /metrics on the internal listener. Default: a new set. */
  metrics?: ServiceMetrics;
  /** What GET /metrics answers. Default: `metrics`' own registry (a worker passes the whole service's). */
  metricsText?: (metrics: ServiceMetrics) => () => Promise<string>;
  /** Serve both listeners over TLS (ALPN h2 and http/1.1) with this PEM certificate and key. Default: cleartext. */
  tls?: { cert: string; key: string };
  /** With `tls`: PEM CA whose client certificates name operators on the internal listener (mutual TLS). Default none. */
  adminClientCa?: string;
  /** Time allowed to receive a whole request, HTTP/1.1 and HTTP/2. Default 30000 ms. */
  requestTimeoutMs?: number;
  /** Bind each listener with SO_REUSEPORT (one socket per worker process). Default false. */
  reusePort?: boolean;
  /** Most open connections per listener. Default 4096. */
  maxConnectionsPerListener?: number;
  /** Browser origins allowed to call the REST API (CORS), exact. Default none: CORS is off. */
  corsOrigins?: readonly string[];
  /** Host names the internal listener answers to besides its address and loopback (INTERNAL_HOSTNAMES). Default none. */
  internalHostnames?: readonly string[];
  /** Which operator presents a secret: admin calls (UserKeyService, TokenAdminService) need one. */
  operatorOf: OperatorLookup;
  /** Which service presents a secret in X-Service-Credential: IntrospectToken and `/auth` then need one. Default: off. */
  serviceOf?: OperatorLookup;
  /** The token console's built files, served on the public listener at `/` and `/console/`. Default: none (no console). */
  console?: ConsoleAssets;
  /** OpenTelemetry spans of every exchange and Redis operation. Default: none (tracing off). */
  tracing?: CallTracing;
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
/** Largest IntrospectToken request accepted (internal listener). */
const INTROSPECTION_READ_MAX_BYTES = 2 * 1024 * 1024;

function notFound(_req: NodeServerRequest, res: NodeServerResponse): void {
  res.writeHead(404, { "content-type": "application/json" });
  res.end(statusJson(Code.NotFound, "no such resource"));
}

/**
 * The service: the public listener serves TokenService (Connect, gRPC,
 * gRPC-Web and the REST mapping) and health checks;
 * the internal listener also serves UserKeyService, TokenAdminService,
 * TokenIntrospectionService, grpc.health.v1, gRPC server reflection, the
 * Prometheus metrics and forward-auth (`/auth`) for the edge proxy.
 */
export function createApp(opts: AppOptions): App {
  // Aborted by stop(): /readyz and gRPC health say NOT_SERVING from then on.
  const stopping = new AbortController();
  const ready = createReadinessProbe({ redis: opts.redis, stopping: stopping.signal });
  const metrics = opts.metrics ?? createServiceMetrics({ ready });
  const call = createRedisCall({
    observe: observeRedis(metrics),
    ...(opts.tracing === undefined ? {} : { trace: opts.tracing.redis }),
  });
  const durability = {
    ...(opts.redisMinReplicasAck === undefined ? {} : { minReplicasAck: opts.redisMinReplicasAck }),
    ...(opts.redisWaitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.redisWaitTimeoutMs }),
  };
  const tokenStore = createTokenStore({
    redis: opts.redis,
    call,
    ...durability,
    ...(opts.tokenMaxActivePerUser === undefined
      ? {}
      : { maxActivePerUser: opts.tokenMaxActivePerUser }),
    ...(opts.tokenRateLimitPerMinute === undefined
      ? {}
      : { rateLimitPerMinute: opts.tokenRateLimitPerMinute }),
  });
  const tokenService = createTokenService({
    store: tokenStore,
    verifier: createEd25519Verifier(),
    maxLifetimeSeconds: opts.tokenMaxLifetimeSeconds,
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
  const bearer = createBearerAuthenticator({
    store: tokenStore,
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
  const introspected = {
    active: metrics.introspections.labels({ outcome: "active" }),
    inactive: metrics.introspections.labels({ outcome: "inactive" }),
  };
  const introspectionService = createTokenIntrospectionService({
    authenticator: bearer,
    observe: (active) => (active ? introspected.active : introspected.inactive).inc(),
  });
  const audit = createAuditLog(opts.logger);
  const userKeyService = createUserKeyService({
    store: createPublicKeyStore({ redis: opts.redis, call, ...durability }),
    audit,
  });
  const tokenAdminService = createTokenAdminService({ store: tokenStore, audit });
  const grpcHealth = createGrpcHealth({
    ready,
    stopping: stopping.signal,
    services: [
      TokenService.typeName,
      UserKeyService.typeName,
      TokenIntrospectionService.typeName,
      TokenAdminService.typeName,
    ],
  });
  const reflection = createGrpcReflection({
    services: [TokenService, UserKeyService, TokenIntrospectionService, TokenAdminService, Health],
  });
  // Off unless SERVICE_CREDENTIALS_FILE lists services.
  const serviceCheck = serviceCredentialCheck(opts.serviceOf);
  // Outermost first: the log and the metrics see the error the client gets.
  const interceptors: Interceptor[] = [
    ...(opts.tracing === undefined ? [] : [traceContextInterceptor(opts.tracing)]),
    requestIdInterceptor(),
    callTelemetryInterceptor({ metrics }),
    // Before anything else reads an admin call: refused ones are still logged and counted.
    adminAuthInterceptor({ operatorOf: opts.operatorOf }),
    // Only when SERVICE_CREDENTIALS_FILE is set: off, IntrospectToken reads no header.
    ...(opts.serviceOf === undefined
      ? []
      : [serviceCredentialInterceptor({ check: serviceCheck })]),
    errorInterceptor(),
    // Innermost: every protocol's request meets its proto's rules before the service.
    validationInterceptor(),
  ];
  // What the interceptors do not see (plain endpoints, refusals made before a
  // call) is logged and counted per answer.
  const telemetry = createAnswerTelemetry({
    logger: opts.logger,
    metrics,
    ...(opts.tracing === undefined ? {} : { tracing: opts.tracing }),
  });
  // A call's context: its exchange and request id, and who is calling.
  const callContext = withCaller(telemetry.contextValues);
  const health = createHealthEndpoints(ready);
  const metricsEndpoint = createMetricsEndpoint(metrics, opts.metricsText?.(metrics));
  const forwardAuth = createForwardAuthEndpoint({ authenticator: bearer, serviceCheck });
  // The committed document (checked in and tested), with the limits of this
  // configuration set where the build found them.
  const openApi = createOpenApiEndpoint(
    configuredOpenApiDocument(
      loadOpenApiDocument(),
      {
        maxLifetimeSeconds: opts.tokenMaxLifetimeSeconds,
        rateLimitPerMinute:
          opts.tokenRateLimitPerMinute ?? DEFAULT_SERVICE_LIMITS.rateLimitPerMinute,
        maxActivePerUser: opts.tokenMaxActivePerUser ?? DEFAULT_SERVICE_LIMITS.maxActivePerUser,
      },
      loadLimitLocations(),
    ),
  );
  // Off unless origins are listed: then it answers preflights on the REST paths.
  const cors =
    opts.corsOrigins === undefined || opts.corsOrigins.length === 0
      ? []
      : [
          createCorsEndpoint({
            origins: opts.corsOrigins,
            routes: createRouteTable(TokenService.methods),
          }),
        ];

  type Endpoint = (req: NodeServerRequest, res: NodeServerResponse) => boolean;

  /**
   * A listener's handler: plain HTTP endpoints (health, metrics), then
   * Connect/gRPC/gRPC-Web, then the REST mapping of the google.api.http rules
   * of the `rest` services (the same implementations and interceptors); each
   * answer, whoever gives it, with its request id, log line and count.
   */
  function listener(
    routes: (router: ConnectRouter) => void,
    rest: readonly ServiceImplSpec[],
    endpoints: readonly Endpoint[],
    hosts: HostGuardOptions = {},
  ) {
    const fallback =
      rest.length === 0
        ? notFound
        : createRestGateway({
            services: rest,
            interceptors,
            maxBodyBytes: READ_MAX_BYTES,
            contextValues: callContext,
            onInternalError: (err) =>
              opts.logger.error({ err: String(err) }, "REST gateway failure"),
            onRoute: (req, method) =>
              exchangeOf(req)?.names(`${method.parent.typeName}/${method.name}`, "rest"),
            onErrorAnswer: (req, answer) => {
              const exchange = exchangeOf(req);
              exchange?.names(
                answer.method === undefined
                  ? exchange.method
                  : `${answer.method.parent.typeName}/${answer.method.name}`,
                "rest",
              );
              exchange?.answers(answer.code, answer.message);
            },
          }).handle;
    const connect = createConnectHandler({
      interceptors,
      readMaxBytes: READ_MAX_BYTES,
      routes,
      fallback,
      contextValues: callContext,
    });
    const hostGuard = createHostGuard(hosts);
    const { names } = hosts;
    return {
      handler: telemetry.wrap((req: NodeServerRequest, res: NodeServerResponse) => {
        if (!hostGuard(req, res) && !endpoints.some((endpoint) => endpoint(req, res))) {
          connect.handle(req, res);
        }
      }),
      // A stream for a name this listener does not answer to is left to the
      // handler, whose host guard refuses it.
      streamHandler: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
        const authority = headers[":authority"];
        if (
          names !== undefined &&
          (authority === undefined || !hostAllowed(hostOf(authority), names))
        ) {
          return undefined;
        }
        return connect.takeStream(
          stream,
          headers,
          () => telemetry.streamExchange(stream, headers),
          (exchange) => {
            const values = telemetry.exchangeValues(exchange);
            values.set(callerKey, callerOf(stream.session?.socket));
            return values;
          },
        );
      },
    };
  }

  /** What both listeners share: limits, TLS, and where transport events are reported. */
  function transport(
    name: "public" | "internal",
  ): Omit<DualProtocolServerOptions, "handler" | "host" | "port"> {
    const clientCa = name === "internal" ? opts.adminClientCa : undefined;
    return {
      ...(opts.tls === undefined
        ? {}
        : { tls: clientCa === undefined ? opts.tls : { ...opts.tls, clientCa } }),
      ...(opts.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: opts.requestTimeoutMs }),
      ...(opts.reusePort === undefined ? {} : { reusePort: opts.reusePort }),
      ...(opts.maxConnectionsPerListener === undefined
        ? {}
        : { maxConnections: opts.maxConnectionsPerListener }),
      // A reset or a broken connection harms nobody but its client: a debug line.
      onClientError: (err: Error & { code?: string }, source: ClientErrorSource) =>
        opts.logger.debug(
          { listener: name, source, err: err.code ?? err.message },
          "client connection error",
        ),
      onServerError: (err: Error) =>
        opts.logger.warn({ listener: name, err: String(err) }, "listener error"),
      onTransportAnswer: telemetry.transportAnswer,
    };
  }

  const publicServer = createDualProtocolServer({
    ...transport("public"),
    host: opts.host,
    port: opts.publicPort,
    ...listener(
      (router) => router.service(TokenService, tokenService),
      [createServiceImplSpec<typeof TokenService>(TokenService, tokenService)],
      [
        ...cors,
        health,
        openApi,
        createMethodGuard({ paths: ["/healthz", "/readyz", "/openapi.json"] }),
        ...(opts.console === undefined ? [] : [createConsoleEndpoint(opts.console)]),
      ],
    ),
  });
  const internalServer = createDualProtocolServer({
    ...transport("internal"),
    host: opts.internalHost ?? "127.0.0.1",
    port: opts.internalPort,
    ...listener(
      (router) => {
        router.service(TokenService, tokenService);
        router.service(UserKeyService, userKeyService);
        router.service(TokenAdminService, tokenAdminService);
        // Any string a caller forwards answers `active: false`, not a size
        // error: up to 2 MiB here (gRPC's own default is 4 MiB).
        router.service(TokenIntrospectionService, introspectionService, {
          readMaxBytes: INTROSPECTION_READ_MAX_BYTES,
        });
        router.service(Health, grpcHealth);
        router.service(ReflectionV1, reflection.v1);
        router.service(ReflectionV1Alpha, reflection.v1alpha);
      },
      [],
      // `/auth` answers every method: a proxy asks with the method of the request it checks.
      [
        health,
        metricsEndpoint,
        forwardAuth,
        createMethodGuard({ paths: ["/healthz", "/readyz", "/metrics"] }),
      ],
      // No DNS rebinding: only its own names. `/auth` is asked by proxies,
      // which forward their client's Host (Caddy, Envoy).
      {
        names: [
          (opts.internalHost ?? "127.0.0.1").toLowerCase(),
          ...(opts.internalHostnames ?? []),
        ],
        anyNamePaths: ["/auth"],
      },
    ),
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
    },
  };
}
