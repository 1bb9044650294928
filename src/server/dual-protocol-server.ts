// The service's listener: one port that speaks HTTP/1.1 and HTTP/2 alike
// (cleartext, where a connection's first bytes pick the protocol, or TLS,
// where ALPN does), composed of the parts in src/server/listener/ (the
// ports and the hand-off, each protocol's server, the connection cap, the
// HTTP/2 sessions and their bounds, the bookkeeping of every request); then
// its listening socket and its graceful close, which are this file's own.
// Tested by test/unit/server/dual-protocol-server.test.ts, test/integration/graceful-stop.test.ts, test/integration/connection-resets.test.ts.
import type { Server as HttpServer } from "node:http";
import type { AddressInfo, ListenOptions, Server } from "node:net";
import type { NodeHandler } from "../http/node-handler.js";
import { type ConnectionCap, createConnectionCap } from "./listener/connection-cap.js";
import { createHttp1Server, type Http1Server } from "./listener/http1-server.js";
import { createHttp2Server, type StreamHandler } from "./listener/http2-server.js";
import { type Http2SessionLimits, startHttp2SessionLimits } from "./listener/http2-sessions.js";
import {
  createInFlightRequests,
  createUnreadAnswers,
  type InFlightRequests,
  type UnreadAnswers,
} from "./listener/in-flight-requests.js";
import {
  cleartextListener,
  type ProtocolHandOff,
  protocolHandOff,
  tlsListener,
} from "./listener/protocol-hand-off.js";
import {
  type ClientErrorSource,
  clientErrorReport,
  refusalReport,
} from "./listener/transport-reports.js";
import type { TransportAnswer } from "./transport-answer.js";

export type { StreamHandler } from "./listener/http2-server.js";
export type { ClientErrorSource } from "./listener/transport-reports.js";

export interface DualProtocolServerOptions {
  handler: NodeHandler;
  /** Takes the HTTP/2 streams it serves straight off the stream. Default: none (all go to `handler`). */
  streamHandler?: StreamHandler;
  /** Bind address. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /**
   * Bind this process's own listening socket with SO_REUSEPORT (Linux), so
   * that several processes on one port each accept and the kernel spreads
   * connections among them; under node:cluster it also keeps the primary out
   * of accepting. Ignored for port 0. Default false.
   */
  reusePort?: boolean;
  /** Most concurrent HTTP/2 streams per connection. Default 100. */
  maxConcurrentStreams?: number;
  /** Time allowed to receive a request's headers. Default 10000 ms. */
  headersTimeoutMs?: number;
  /**
   * Time allowed to receive a whole request, HTTP/1.1 and HTTP/2 alike.
   * REQUEST_TIMEOUT_MS. An HTTP/1.1 request over it is answered 408 and its
   * connection closed; an HTTP/2 stream over it is answered 408 and reset if
   * nothing was answered yet, else reset (the session lives on).
   */
  requestTimeoutMs: number;
  /** Most open connections; one over it is closed as soon as it is accepted (MAX_CONNECTIONS_PER_LISTENER). */
  maxConnections: number;
  /**
   * How long an answer may have bytes waiting for its client (window 0, a
   * client that stops reading) before its HTTP/2 stream is reset or its
   * HTTP/1.1 connection closed: between this and twice this (ANSWER_TIMEOUT_MS).
   */
  answerTimeoutMs: number;
  /** How long an idle HTTP/1.1 keep-alive connection stays open. Default 5000 ms. */
  keepAliveTimeoutMs?: number;
  /** An idle HTTP/2 connection is closed after this time. Default 120000 ms. */
  http2IdleTimeoutMs?: number;
  /**
   * Every HTTP/2 session is sent a PING this often; one that does not answer
   * within `http2PingTimeoutMs` is destroyed with its connection. This is
   * what ends a session whose client is gone without the server seeing it
   * (see src/server/listener/http2-sessions.ts). Defaults 10000 and 5000 ms.
   */
  http2PingIntervalMs?: number;
  http2PingTimeoutMs?: number;
  /**
   * Serve TLS with this PEM certificate (chain) and key; ALPN picks h2 or
   * http/1.1. Default: cleartext, where the first bytes pick the protocol.
   */
  tls?: {
    cert: string;
    key: string;
    /** PEM CA(s): ask each client for a certificate, verified against them; none is required. */
    clientCa?: string;
  };
  /**
   * A client's connection failed: reset, broken protocol, failed TLS
   * handshake, over the connection cap. Only that client is affected; the
   * connection is closed. Called at most once per error. Default: ignored.
   */
  onClientError?: (err: Error, source: ClientErrorSource) => void;
  /** The listening socket failed after it listened (e.g. EMFILE on accept); it keeps listening. Default: ignored. */
  onServerError?: (err: Error) => void;
  /** The transport layer answered by itself (400, 408, 431...), with a new `x-request-id`. Default: ignored. */
  onTransportAnswer?: (answer: TransportAnswer) => void;
  /** The number of open connections changed (the count the cap is held to). Default: ignored. */
  onOpenConnections?: (open: number) => void;
}

export interface DualProtocolServer {
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** The bound port (after listen). */
  readonly port: number;
  /** Connections open now, by the server's own count (what `maxConnections` is held to). */
  readonly openConnections: number;
  /**
   * Stops accepting connections, lets in-flight requests finish (up to
   * `graceMs`, default 10000), then closes every connection. HTTP/2 clients
   * get a GOAWAY at once; HTTP/1.1 has none, so for `drainMs` (default 500)
   * requests that arrive on open keep-alive connections are still served,
   * answered with `connection: close`, before idle connections are closed.
   */
  close(graceMs?: number, drainMs?: number): Promise<void>;
}

/**
 * One port that speaks both HTTP/1.1 and cleartext HTTP/2 with prior knowledge:
 * the first bytes of each connection pick the protocol. So gRPC clients
 * (HTTP/2), curl, browsers and fetch (HTTP/1.1) all reach the same handler.
 * Its parts are in listener/: the ports, each protocol's server, the
 * connection cap, the HTTP/2 sessions' bounds; the listening socket and the
 * graceful close are below.
 */
export function createDualProtocolServer(opts: DualProtocolServerOptions): DualProtocolServer {
  const { requestTimeoutMs } = opts;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeoutMs = Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeoutMs);
  const http2IdleTimeoutMs = opts.http2IdleTimeoutMs ?? 120_000;
  const report = clientErrorReport(opts);
  const inFlight = createInFlightRequests();
  const unreadAnswers = createUnreadAnswers(opts.answerTimeoutMs);
  const requests = {
    handler: opts.handler,
    requestTimeoutMs,
    inFlight,
    unreadAnswers,
    report,
    tellRefusal: refusalReport(opts),
  };
  const http1 = createHttp1Server({
    ...requests,
    headersTimeoutMs,
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? 5000,
  });
  const http2 = createHttp2Server({
    ...requests,
    streamHandler: opts.streamHandler,
    maxConcurrentStreams: opts.maxConcurrentStreams ?? 100,
    idleTimeoutMs: http2IdleTimeoutMs,
  });
  const connections = createConnectionCap({
    maxConnections: opts.maxConnections,
    report,
    onOpenConnections: opts.onOpenConnections,
    // A full cap may be held by sessions whose clients are gone: they are found at once.
    onFull: () => sessionLimits.checkNow(),
  });
  const sessionLimits = startHttp2SessionLimits({
    sessions: http2.sessions,
    connections,
    report,
    idleTimeoutMs: http2IdleTimeoutMs,
    pingIntervalMs: opts.http2PingIntervalMs ?? 10_000,
    pingTimeoutMs: opts.http2PingTimeoutMs ?? 5000,
  });
  const handOff = protocolHandOff(http1.server, http2.sessions, report);
  const accepting = { connections, handOff, report, headersTimeoutMs };
  const tcp =
    opts.tls === undefined ? cleartextListener(accepting) : tlsListener(opts.tls, accepting);
  const listening = listeningSocket(tcp, http1.server, opts);
  const closing: ClosingParts = {
    tcp,
    http1,
    sessionLimits,
    handOff,
    inFlight,
    connections,
    unreadAnswers,
  };
  return {
    get port() {
      return listening.port;
    },
    get openConnections() {
      return connections.size;
    },
    listen: () => listening.listen(),
    close: (graceMs, drainMs) => closeGracefully(closing, graceMs, drainMs),
  };
}

// The listening socket.

/** Where and how to listen; read when `listen` is called. */
export interface ListeningSocketOptions {
  host: string;
  /** 0 picks a free one. */
  port: number;
  /** SO_REUSEPORT, for a fixed port only. */
  reusePort?: boolean;
  /** The listening socket failed after it listened; it keeps listening. */
  onServerError?: (err: Error) => void;
}

/** The listener's one listening socket. */
export interface ListeningSocket {
  /** The bound port (0 before `listen`). */
  readonly port: number;
  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number>;
}

/**
 * Listens with `tcp`, the server that accepts every connection; `http1`,
 * which is handed its sockets, learns that the listener listens.
 */
export function listeningSocket(
  tcp: Server,
  http1: HttpServer,
  opts: ListeningSocketOptions,
): ListeningSocket {
  let port = 0;
  return {
    get port() {
      return port;
    },
    listen() {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        const options: ListenOptions =
          opts.reusePort === true && opts.port !== 0
            ? { port: opts.port, host: opts.host, exclusive: true, reusePort: true }
            : { port: opts.port, host: opts.host };
        tcp.listen(options, () => {
          tcp.off("error", reject);
          // From now on an error (e.g. EMFILE when accepting) concerns one
          // connection; the listener goes on.
          tcp.on("error", (err: Error) => opts.onServerError?.(err));
          port = (tcp.address() as AddressInfo).port;
          // The HTTP/1 server never listens itself (it is handed sockets), but
          // its connection tracking, which enforces headersTimeout and
          // requestTimeout and finds idle connections, starts on 'listening'.
          http1.emit("listening");
          resolve(port);
        });
      });
    },
  };
}

// The graceful close.

/** What a close stops, in the order it stops them. */
interface ClosingParts {
  tcp: Server;
  http1: Http1Server;
  sessionLimits: Http2SessionLimits;
  handOff: ProtocolHandOff;
  inFlight: InFlightRequests;
  connections: ConnectionCap;
  unreadAnswers: UnreadAnswers;
}

/**
 * Stops accepting connections, lets in-flight requests finish (up to
 * `graceMs`), then closes every connection. HTTP/2 clients get a GOAWAY at
 * once; HTTP/1.1 has none, so for `drainMs` requests that arrive on open
 * keep-alive connections are still served, answered with `connection:
 * close`, before idle connections are closed.
 */
async function closeGracefully(
  parts: ClosingParts,
  graceMs = 10_000,
  drainMs = 500,
): Promise<void> {
  const { tcp, http1, handOff, inFlight } = parts;
  http1.drain();
  const deadline = Date.now() + graceMs;
  const stopped = new Promise<void>((resolve) => tcp.close(() => resolve()));
  parts.sessionLimits.closeSessions();
  // A client may be sending on an idle keep-alive connection right now;
  // closing it under that request would cut the request off.
  const drainEnd = Date.now() + Math.min(drainMs, graceMs);
  while (Date.now() < drainEnd && handOff.open > 0) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  http1.server.closeIdleConnections();
  if (inFlight.count > 0) {
    await inFlight.settled(Math.max(0, deadline - Date.now()));
  }
  handOff.destroyAll();
  parts.connections.endAll();
  http1.server.close(); // Stops its connection-checking timer.
  parts.unreadAnswers.stop();
  await stopped;
}
