import type { TransportAnswer, TransportRefusal } from "../transport-answer.js";

/** Where a client's connection failed. */
export type ClientErrorSource =
  | "socket"
  | "tls-handshake"
  | "http1"
  | "http2-session"
  | "http2-stream"
  | "over-cap";

/** Reports a client's connection error: at most once per error. */
export type ReportClientError = (err: Error, source: ClientErrorSource) => void;

/** Reports an answer the transport gave by itself, before any handler. */
export type TellRefusal = (
  refusal: TransportRefusal,
  requestId: string,
  reason: string,
  protocol: "http1" | "http2",
) => void;

/** Where the listener's owner hears of client errors and of the transport's own answers. */
export interface TransportReportTargets {
  onClientError?: (err: Error, source: ClientErrorSource) => void;
  onTransportAnswer?: (answer: TransportAnswer) => void;
}

/**
 * Resets and broken connections are routine (health checks, scanners,
 * clients going away): each is reported once, to `targets.onClientError`
 * as it is when the error comes. The listeners that call this are what
 * keeps them from going unhandled: an 'error' event without a listener
 * stops the process.
 */
export function clientErrorReport(targets: TransportReportTargets): ReportClientError {
  const reported = new WeakSet<Error>();
  return (err, source) => {
    if (!reported.has(err)) {
      reported.add(err);
      targets.onClientError?.(err, source);
    }
  };
}

/** Tells `targets.onTransportAnswer` (as it is when the answer is given) of each answer the transport gives by itself. */
export function refusalReport(targets: TransportReportTargets): TellRefusal {
  return (refusal, requestId, reason, protocol) =>
    targets.onTransportAnswer?.({
      status: refusal.status,
      code: refusal.code,
      requestId,
      reason,
      protocol,
    });
}
