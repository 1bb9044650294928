import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { NO_SUCH_RESOURCE } from "@perps/token-client/protocol";
import { type CallGate, callerKey, callerOf, withCaller } from "../admin-auth/call-gate.js";
import { type CheckLane, INTROSPECT_PATH } from "../check-lane/check-lane.js";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { Logger } from "../log/logger.js";
import { createRestGateway } from "../rest/rest-gateway.js";
import type { RouteTable } from "../rest/route-table.js";
import type { AnswerTelemetry } from "./answer-telemetry.js";
import type { DualProtocolServerOptions } from "./dual-protocol-server.js";
import { type Exchange, exchangeOf } from "./exchange.js";
import { authorityCheck, createHostGuard, type HostGuardOptions } from "./host-guard.js";
import { TAKEN_BY_LANE } from "./listener/http2-server.js";
import { type ListenerName, restServedOn, type ServedService, servedOn } from "./served-service.js";
import { refuseWithStatus } from "./status-refusal.js";
import { createConnectHandler } from "./wire/connect-handler.js";

export interface ListenerHandlerOptions {
  name: ListenerName;
  /** Every served service; those of this listener are routed, those with REST here are mapped. */
  services: readonly ServedService[];
  interceptors: readonly Interceptor[];
  telemetry: AnswerTelemetry;
  /** Plain HTTP endpoints, asked in order before the RPCs. */
  endpoints: readonly Endpoint[];
  /** The names it answers to. Default: every name. */
  hosts?: HostGuardOptions;
  /** Largest request message on any protocol. */
  readMaxBytes: number;
  /** Refuses a call lacking its service's credential before its body is read. Default: none refused. */
  gate?: CallGate;
  /** The table of its REST routes, when an endpoint (CORS) matches against it too. Default: its own. */
  restRoutes?: RouteTable;
  logger: Logger;
  /** Answers the checks it can from the token cache before anything else. Default: none (the pipeline answers). */
  lane?: CheckLane;
}

const NOT_FOUND = { status: 404, code: Code.NotFound, message: NO_SUCH_RESOURCE, unsized: true };

function notFound(req: NodeServerRequest, res: NodeServerResponse): void {
  refuseWithStatus(req, res, NOT_FOUND);
}

/**
 * Asks `endpoints` in order; the one that answers names the request's
 * exchange by its label, and marks a probe: true when one answered.
 */
export function askEndpoints(
  endpoints: readonly Endpoint[],
): (req: NodeServerRequest, res: NodeServerResponse) => boolean {
  return (req, res) => {
    for (const endpoint of endpoints) {
      if (endpoint.answer(req, res)) {
        const exchange = exchangeOf(req);
        if (exchange !== undefined) {
          if (endpoint.label !== undefined) {
            exchange.nameCall(endpoint.label);
          }
          if (endpoint.probe === true) {
            exchange.markProbe();
          }
        }
        return true;
      }
    }
    return false;
  };
}

/** The RPC label of a method, as the log and the metrics name it. */
function methodLabel(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/**
 * A listener's handler: plain HTTP endpoints (health, metrics), then
 * Connect/gRPC/gRPC-Web, then the REST mapping of the google.api.http rules
 * of its REST services (the same invoker: the same interceptors and
 * implementations); each answer, whoever gives it, with its request id, log
 * line and count. The stream handler takes the common gRPC call off node's
 * HTTP/2 stream. What the exchange is named (the RPC, an endpoint's label)
 * is said here, as the request is routed.
 */
export function createListenerHandler(
  opts: ListenerHandlerOptions,
): Required<Pick<DualProtocolServerOptions, "handler" | "streamHandler">> {
  const { telemetry, interceptors, readMaxBytes } = opts;
  // A call's context: its exchange and request id, and who is calling.
  const callContext = withCaller(telemetry.contextValues);
  const served = servedOn(opts.services, opts.name);
  const restServed = restServedOn(opts.services, opts.name);
  for (const s of restServed) {
    if (!served.includes(s)) {
      throw new Error(
        `${s.service.typeName} has a REST mapping on the ${opts.name} listener but is not served there`,
      );
    }
  }
  let fallback: NodeHandler = notFound;
  const connect = createConnectHandler({
    interceptors: [...interceptors],
    readMaxBytes,
    routes: (router: ConnectRouter) => {
      for (const service of served) {
        service.route(router);
      }
    },
    fallback: (req, res) => fallback(req, res),
    contextValues: callContext,
    ...(opts.gate === undefined ? {} : { gate: opts.gate }),
  });
  if (restServed.length > 0) {
    fallback = createRestGateway({
      services: restServed.map((s) => s.spec()),
      invoker: connect.invoker,
      ...(opts.restRoutes === undefined ? {} : { routes: opts.restRoutes }),
      maxBodyBytes: readMaxBytes,
      contextValues: callContext,
      onInternalError: (err) => opts.logger.error({ err: String(err) }, "REST gateway failure"),
      onRoute: (req, method) => exchangeOf(req)?.nameCall(methodLabel(method), "rest"),
      onErrorAnswer: (req, answer) => {
        const exchange = exchangeOf(req);
        exchange?.nameCall(
          answer.method === undefined ? exchange.method : methodLabel(answer.method),
          "rest",
        );
        exchange?.recordOutcome(answer.code, answer.message);
      },
    }).handle;
  }
  const hostGuard = createHostGuard(opts.hosts ?? {});
  const serves = authorityCheck(opts.hosts?.names);
  const endpointAnswered = askEndpoints(opts.endpoints);
  const { lane } = opts;
  const pipeline = telemetry.wrap((req: NodeServerRequest, res: NodeServerResponse) => {
    if (!hostGuard(req, res) && !endpointAnswered(req, res)) {
      connect.handle(req, res);
    }
  }, opts.name);
  const introspection = lane === undefined ? undefined : connect.streamRoute(INTROSPECT_PATH);
  const begin = (method: string, stream: ServerHttp2Stream, headers: IncomingHttpHeaders) =>
    telemetry.streamExchange(stream, headers, opts.name, method);
  const contextValues = (stream: ServerHttp2Stream) => (exchange: Exchange) => {
    const values = telemetry.exchangeValues(exchange);
    values.set(callerKey, callerOf(stream.session?.socket));
    return values;
  };
  return {
    handler:
      lane === undefined
        ? pipeline
        : (req, res) => {
            let answered = false;
            try {
              answered = lane.answerAuth(req, res);
            } catch (err) {
              // The pipeline answers, and its failure line tells.
              opts.logger.error({ err: String(err) }, "check lane failure");
            }
            if (!answered) {
              pipeline(req, res);
            }
          },
    // A stream for a name this listener does not answer to is left to the
    // handler, whose host guard refuses it.
    streamHandler: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      const authority = headers[":authority"];
      if (authority === undefined || !serves(authority)) {
        return undefined;
      }
      if (
        lane !== undefined &&
        introspection !== undefined &&
        headers[":path"] === INTROSPECT_PATH &&
        lane.takeStream(stream, headers, {
          route: introspection,
          methods: connect.methods,
          begin: (method) => begin(method, stream, headers),
          contextValues: contextValues(stream),
        })
      ) {
        return TAKEN_BY_LANE;
      }
      return connect.takeStream(
        stream,
        headers,
        (method) => begin(method, stream, headers),
        contextValues(stream),
      );
    },
  };
}
