import { type Code, createContextKey } from "@connectrpc/connect";
import type { NodeServerRequest } from "../http/node-handler.js";
import type { CallTrace } from "../tracing/call-tracing.js";

/**
 * One request and its answer, followed from the moment a listener receives
 * the request until the answer is sent; the listener's telemetry leaves one
 * log line and one count for it once the answer is sent (see
 * answer-telemetry.ts): the one place where any answer is logged and counted.
 *
 * Who writes it: the listener (answer-telemetry.ts makes it, marks it sent
 * and traces it; listener-handler.ts and the Connect handler's dispatch name
 * it as they route the request), the call outcome interceptor of interceptor-chain.ts (a call's
 * error), and the answer writers when they refuse a request before any call
 * (status-refusal.ts for the service's JSON errors, wire/grpc-answer.ts and
 * wire/connect-unary.ts for the RPC protocols, wire/answer-failure.ts for our
 * own failure).
 */
export class Exchange {
  /** The RPC's full name ("package.Service/Method") once a route or path named one. */
  method = "http";
  /** rest, connect, grpc or grpc-web once known; http for plain endpoints. */
  protocol = "http";
  /** The answer's code, when the layer that answered knows it; else the HTTP status tells. */
  code: Code | undefined = undefined;
  /** What the answer says is wrong, for the log. */
  message = "";
  /** The answer's HTTP status, once it is given. */
  status = 0;
  /** Whether the whole answer was handed to the transport; false when the client left first. */
  complete = false;
  /**
   * A health probe (`/healthz`, `/readyz`): balancers ask every few seconds,
   * so its answered line is a debug line.
   */
  probe = false;
  /** Its server span, when tracing is on. */
  trace: CallTrace | undefined = undefined;
  /** The listener it came to ("" outside a listener). */
  listener = "";
  /** A check's answer, once the introspection said it (a live token or not); undefined for any other call. */
  live: boolean | undefined = undefined;
  /** Whether the request id is the caller's (else the service made it). */
  callerId = false;

  constructor(
    /** The request id, echoed in `x-request-id`. */
    readonly requestId: string,
    /** `performance.now()` when the request arrived. */
    readonly started: number,
  ) {}

  /** Names what the request called: the RPC (or an endpoint's label) and, once known, the protocol. */
  nameCall(method: string, protocol?: string): void {
    this.method = method;
    if (protocol !== undefined) {
      this.protocol = protocol;
    }
  }

  /** Records that the whole answer, with this HTTP status, was handed to the transport. */
  recordSent(status: number): void {
    this.status = status;
    this.complete = true;
  }

  /** Marks it a health probe. */
  markProbe(): void {
    this.probe = true;
  }

  /** Records the answer's code and, for the log, what it says is wrong (or our failure's cause). */
  recordOutcome(code: Code, message: string): void {
    this.code = code;
    this.message = message;
  }
}

/**
 * Whether its answer carries no request id: a check's (live or not) whose
 * caller sent none, as docs/design-choices.md says ("a check makes none").
 */
export function answersWithoutId(exchange: Exchange | undefined): boolean {
  return exchange !== undefined && exchange.live !== undefined && !exchange.callerId;
}

/** The exchange a call belongs to, for the interceptors. */
export const exchangeKey = createContextKey<Exchange | undefined>(undefined, {
  description: "exchange",
});

const EXCHANGE = Symbol("exchange");

type Carrier = NodeServerRequest & { [EXCHANGE]?: Exchange };

/** Attaches the exchange to its request, where every layer that gets the request finds it. */
export function attachExchange(req: NodeServerRequest, exchange: Exchange): void {
  (req as Carrier)[EXCHANGE] = exchange;
}

/** The request's exchange; undefined when the handler runs outside the listener's telemetry (unit tests). */
export function exchangeOf(req: NodeServerRequest): Exchange | undefined {
  return (req as Carrier)[EXCHANGE];
}
