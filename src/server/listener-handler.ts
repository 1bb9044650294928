import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import type { CallGate } from "../admin-auth/call-gate.js";
import { callerKey, callerOf, withCaller } from "../admin-auth/caller-context.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { Logger } from "../log/logger.js";
import { createRestGateway } from "../rest/rest-gateway.js";
import type { RouteTable } from "../rest/route-table.js";
import { writeStatusAnswer } from "../status/status-answer.js";
import type { AnswerTelemetry } from "./answer-telemetry.js";
import type { DualProtocolServerOptions } from "./dual-protocol-server.js";
import { exchangeOf } from "./exchange.js";
import { createHostGuard, type HostGuardOptions, servesAuthority } from "./host-guard.js";
import { type ListenerName, restServedOn, type ServedService, servedOn } from "./served-service.js";
import { createConnectHandler } from "./wire/connect-handler.js";

/** A plain HTTP endpoint: true when it answered the request. */
export type Endpoint = (req: NodeServerRequest, res: NodeServerResponse) => boolean;

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
}

function notFound(_req: NodeServerRequest, res: NodeServerResponse): void {
  writeStatusAnswer(res, {
    status: 404,
    code: Code.NotFound,
    message: "no such resource",
    unsized: true,
  });
}

/**
 * A listener's handler: plain HTTP endpoints (health, metrics), then
 * Connect/gRPC/gRPC-Web, then the REST mapping of the google.api.http rules
 * of its REST services (the same implementations and interceptors); each
 * answer, whoever gives it, with its request id, log line and count. The
 * stream handler takes the common gRPC call off node's HTTP/2 stream.
 */
export function createListenerHandler(
  opts: ListenerHandlerOptions,
): Required<Pick<DualProtocolServerOptions, "handler" | "streamHandler">> {
  const { telemetry, interceptors, readMaxBytes } = opts;
  // A call's context: its exchange and request id, and who is calling.
  const callContext = withCaller(telemetry.contextValues);
  const served = servedOn(opts.services, opts.name);
  const rest = restServedOn(opts.services, opts.name).map((s) => s.spec());
  const fallback =
    rest.length === 0
      ? notFound
      : createRestGateway({
          services: rest,
          ...(opts.restRoutes === undefined ? {} : { routes: opts.restRoutes }),
          interceptors,
          maxBodyBytes: readMaxBytes,
          contextValues: callContext,
          onInternalError: (err) => opts.logger.error({ err: String(err) }, "REST gateway failure"),
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
    interceptors: [...interceptors],
    readMaxBytes,
    routes: (router: ConnectRouter) => {
      for (const service of served) {
        service.route(router);
      }
    },
    fallback,
    contextValues: callContext,
    ...(opts.gate === undefined ? {} : { gate: opts.gate }),
  });
  const hostGuard = createHostGuard(opts.hosts ?? {});
  const names = opts.hosts?.names;
  return {
    handler: telemetry.wrap((req: NodeServerRequest, res: NodeServerResponse) => {
      if (!hostGuard(req, res) && !opts.endpoints.some((endpoint) => endpoint(req, res))) {
        connect.handle(req, res);
      }
    }, opts.name),
    // A stream for a name this listener does not answer to is left to the
    // handler, whose host guard refuses it.
    streamHandler: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      const authority = headers[":authority"];
      if (authority === undefined || !servesAuthority(names, authority)) {
        return undefined;
      }
      return connect.takeStream(
        stream,
        headers,
        () => telemetry.streamExchange(stream, headers, opts.name),
        (exchange) => {
          const values = telemetry.exchangeValues(exchange);
          values.set(callerKey, callerOf(stream.session?.socket));
          return values;
        },
      );
    },
  };
}
