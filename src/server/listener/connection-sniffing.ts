// The dual-protocol listener's cleartext port, where a connection's first bytes pick its protocol.
// Tested by test/integration/connection-resets.test.ts, test/unit/server/dual-protocol-server.test.ts.
import { createServer, type Server } from "node:net";
import type { Connection, ConnectionCap } from "./connection-cap.js";
import type { ProtocolHandOff } from "./protocol-hand-off.js";

// An HTTP/2 connection with prior knowledge starts with the preface "PRI * HTTP/2.0";
// no HTTP/1.1 request starts with "PRI".
const H2_PREFACE_START = Buffer.from("PRI");

/** Reads a cleartext connection's first bytes, which pick its protocol, and hands it over. */
export function sniffProtocol(
  conn: Connection,
  handOff: ProtocolHandOff,
  headersTimeoutMs: number,
): void {
  const socket = conn.raw;
  handOff.track(socket);
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    if (head.length < H2_PREFACE_START.length && head[0] === H2_PREFACE_START[0]) {
      return; // Too short to tell yet.
    }
    socket.off("data", onData);
    socket.setTimeout(0); // The chosen protocol's server applies its own timeouts.
    socket.pause();
    socket.unshift(head);
    if (head.subarray(0, H2_PREFACE_START.length).equals(H2_PREFACE_START)) {
      // The HTTP/2 session reads what is buffered on the next tick; resuming
      // here would hand those bytes to nobody.
      handOff.toHttp2(conn, socket);
    } else {
      handOff.toHttp1(socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
  // A connection that never sends a byte must not be held forever.
  socket.setTimeout(headersTimeoutMs, () => socket.destroy());
}

export interface CleartextListenerOptions {
  connections: ConnectionCap;
  handOff: ProtocolHandOff;
  /** Time allowed for the first bytes. */
  headersTimeoutMs: number;
}

/**
 * One port that speaks both HTTP/1.1 and cleartext HTTP/2 with prior
 * knowledge: each connection accepted under the cap, its first bytes pick
 * the protocol.
 */
export function cleartextListener(opts: CleartextListenerOptions): Server {
  const { connections, handOff, headersTimeoutMs } = opts;
  // As node's HTTP servers do: an answer is sent when written, not held for Nagle's algorithm.
  return createServer({ noDelay: true }, (raw) => {
    const conn = connections.accept(raw);
    if (conn !== undefined) {
      sniffProtocol(conn, handOff, headersTimeoutMs);
    }
  });
}
