import {
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";

/** The server span of one exchange, and the context its children are made in. */
export interface CallTrace {
  readonly span: Span;
  readonly context: Context;
  /** The trace's id (32 hex digits), for the log line. */
  readonly traceId: string;
  readonly httpMethod: string;
}

/** What the exchange says of itself when it is over. */
export interface CallOutcome {
  /** "package.Service/Method", "forward-auth", or "http" for a plain endpoint. */
  readonly method: string;
  /** rest, connect, grpc, grpc-web or http. */
  readonly protocol: string;
  /** The answer's HTTP status; 0 when none was sent. */
  readonly status: number;
  /** The code's name as the metrics write it ("ok", "invalid_argument", …). */
  readonly code: string;
  /** The gRPC status number of the code (0 for ok). */
  readonly grpcStatus: number;
  /** Whether the code points at the service rather than the caller. */
  readonly serverFault: boolean;
  readonly requestId: string;
}

/** The request as the span starts: its HTTP method, version and trace headers. */
export interface CallStart {
  readonly httpMethod: string;
  /** "1.1" or "2". */
  readonly httpVersion: string;
  readonly traceparent: string | string[] | undefined;
  readonly tracestate: string | string[] | undefined;
  /**
   * Whether the caller's trace context is continued. Untrusted (a public
   * client): its sampled flag would override the service's sampler and its
   * `tracestate` would be exported with every span, so the span starts a
   * trace of its own, sampled by the sampler's root rule, with a link to the
   * caller's span (ids and flags, no `tracestate`).
   */
  readonly trusted: boolean;
  /** `performance.now()` when the request arrived. */
  readonly startTime: number;
}

/**
 * The service's tracing, written on the OpenTelemetry API only: a server
 * span per exchange (started where the exchange is made, ended where its log
 * line is written, answer-telemetry.ts) continuing a trusted caller's W3C
 * `traceparent` (linking an untrusted one's), and a client span per Redis operation made while one is
 * active. No token, signature, key or path goes into an attribute: spans
 * are named by the RPC or endpoint.
 */
export interface CallTracing {
  start(call: CallStart): CallTrace;
  finish(trace: CallTrace, outcome: CallOutcome): void;
  /** Runs `fn` with the exchange's span as the active one (its Redis calls become children). */
  within<T>(trace: CallTrace, fn: () => T): T;
  /** A Redis operation's span, under the active exchange's; undefined outside one. Call the result when it ends. */
  redis(operation: string): ((failed: boolean) => void) | undefined;
}

/** The `rpc.system` of a protocol; undefined for REST and plain HTTP. */
function rpcSystem(protocol: string): string | undefined {
  if (protocol === "grpc" || protocol === "grpc-web") {
    return "grpc";
  }
  return protocol === "connect" ? "connect_rpc" : undefined;
}

/** A header's one value, as the W3C propagator reads it. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function createCallTracing(tracer: Tracer, propagator: TextMapPropagator): CallTracing {
  return {
    start(call) {
      const carrier = {
        traceparent: single(call.traceparent),
        tracestate: single(call.tracestate),
      };
      const caller =
        carrier.traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(ROOT_CONTEXT, carrier, {
              keys: () => ["traceparent", "tracestate"],
              get: (c, key) =>
                key === "traceparent"
                  ? c.traceparent
                  : key === "tracestate"
                    ? c.tracestate
                    : undefined,
            });
      const callerSpan = trace.getSpanContext(caller);
      const parent = call.trusted ? caller : ROOT_CONTEXT;
      const links =
        call.trusted || callerSpan === undefined
          ? []
          : [
              {
                context: {
                  traceId: callerSpan.traceId,
                  spanId: callerSpan.spanId,
                  traceFlags: callerSpan.traceFlags,
                  isRemote: true,
                },
              },
            ];
      const span = tracer.startSpan(
        call.httpMethod,
        {
          kind: SpanKind.SERVER,
          startTime: call.startTime,
          links,
          attributes: {
            "http.request.method": call.httpMethod,
            "network.protocol.name": "http",
            "network.protocol.version": call.httpVersion,
          },
        },
        parent,
      );
      return {
        span,
        context: trace.setSpan(parent, span),
        traceId: span.spanContext().traceId,
        httpMethod: call.httpMethod,
      };
    },
    finish(callTrace, outcome) {
      const { span } = callTrace;
      const system = rpcSystem(outcome.protocol);
      const rpc = outcome.method.includes("/") ? outcome.method.split("/") : undefined;
      if (rpc !== undefined) {
        span.updateName(outcome.method);
        span.setAttribute("rpc.service", rpc[0] ?? "");
        span.setAttribute("rpc.method", rpc[1] ?? "");
        if (system !== undefined) {
          span.setAttribute("rpc.system", system);
        }
        if (system === "grpc") {
          span.setAttribute("rpc.grpc.status_code", outcome.grpcStatus);
        } else if (system === "connect_rpc" && outcome.code !== "ok") {
          span.setAttribute("rpc.connect_rpc.error_code", outcome.code);
        }
      } else if (outcome.method === "forward-auth") {
        span.updateName(`${callTrace.httpMethod} /auth`);
        span.setAttribute("http.route", "/auth");
      }
      if (outcome.status !== 0) {
        span.setAttribute("http.response.status_code", outcome.status);
      }
      span.setAttribute("perps.request_id", outcome.requestId);
      if (outcome.serverFault) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
      }
      span.end();
    },
    within(callTrace, fn) {
      return context.with(callTrace.context, fn);
    },
    redis(operation) {
      const active = context.active();
      if (trace.getSpan(active) === undefined) {
        return undefined;
      }
      const span = tracer.startSpan(
        operation,
        {
          kind: SpanKind.CLIENT,
          attributes: { "db.system.name": "redis", "db.operation.name": operation },
        },
        active,
      );
      return (failed) => {
        if (failed) {
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      };
    },
  };
}
