import type { Logger } from "../log/logger.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import type { AnswerTelemetry } from "./answer-telemetry.js";
import type { ClientErrorSource, DualProtocolServerOptions } from "./dual-protocol-server.js";
import type { ListenerName } from "./served-service.js";

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
