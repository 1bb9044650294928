// The dual-protocol listener's close.
// Tested by test/integration/graceful-stop.test.ts, test/integration/connection-resets.test.ts.
import type { Server } from "node:net";
import type { ConnectionCap } from "./connection-cap.js";
import type { Http1Server } from "./http1-server.js";
import type { Http2SessionLimits } from "./http2-sessions.js";
import type { InFlightRequests, UnreadAnswers } from "./in-flight-requests.js";
import type { ProtocolHandOff } from "./protocol-hand-off.js";

/** What a close stops, in the order it stops them. */
export interface ClosingParts {
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
export async function closeGracefully(
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
