import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, it } from "node:test";
import {
  type Connection,
  type ConnectionCap,
  createConnectionCap,
} from "../../../../src/server/listener/connection-cap.js";
import type { ClientErrorSource } from "../../../../src/server/listener/transport-reports.js";

describe("connection cap", () => {
  let server: Server;
  let cap: ConnectionCap;
  const reported: ClientErrorSource[] = [];
  const counts: number[] = [];
  let fullTold = 0;
  /** What `accept` gave for each connection, in order. */
  const accepted: (Connection | undefined)[] = [];
  const clients: Socket[] = [];

  beforeEach(async () => {
    reported.length = 0;
    counts.length = 0;
    fullTold = 0;
    accepted.length = 0;
    cap = createConnectionCap({
      maxConnections: 2,
      report: (_err, source) => reported.push(source),
      onOpenConnections: (open) => counts.push(open),
      onFull: () => {
        fullTold++;
      },
    });
    server = createServer((raw) => accepted.push(cap.accept(raw)));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) {
      client.destroy();
    }
    cap.endAll();
    server.close();
    await once(server, "close");
  });

  /** A client connection, once the server has accepted it (or refused it). */
  async function client(): Promise<Socket> {
    const before = accepted.length;
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.on("error", () => {});
    clients.push(socket);
    while (accepted.length === before) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    return socket;
  }

  it("closes a connection over the cap at once and reports it; counts the others", async () => {
    await client();
    await client();
    const over = await client();
    assert.equal(accepted[2], undefined);
    await once(over, "close");
    assert.deepEqual(reported, ["over-cap"]);
    assert.equal(cap.size, 2);
    assert.deepEqual(counts, [1, 2]);
  });

  it("tells when a connection fills the cap and when one comes over it", async () => {
    await client();
    assert.equal(fullTold, 0);
    await client();
    assert.equal(fullTold, 1, "the cap is full");
    await client();
    assert.equal(fullTold, 2, "one over it");
  });

  it("frees a connection's slot when its socket closes, and accepts again", async () => {
    const first = await client();
    await client();
    first.end();
    while (cap.size === 2) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(counts, [1, 2, 1]);
    await client();
    assert.notEqual(accepted[2], undefined, "accepted again");
    assert.equal(cap.size, 2);
  });

  it("ends a connection at every layer once, and forgets its handshake", async () => {
    const socket = await client();
    const conn = accepted[0];
    assert.ok(conn !== undefined);
    const other = await client();
    const upper = accepted[1]?.raw;
    assert.ok(upper !== undefined);
    conn.tls = upper; // Stands for the TLS socket over the raw one.
    cap.handshakeStarts(conn);
    assert.equal(cap.handshakeOf(conn.raw), conn);
    cap.end(conn);
    cap.end(conn);
    assert.equal(conn.raw.destroyed, true);
    assert.equal(upper.destroyed, true);
    assert.equal(cap.handshakeOf(conn.raw), undefined);
    assert.deepEqual(counts, [1, 2, 1]);
    await Promise.all([once(socket, "close"), once(other, "close")]);
  });

  it("finds a TLS connection by its peer until its handshake is done", async () => {
    await client();
    const conn = accepted[0];
    assert.ok(conn !== undefined);
    assert.equal(cap.handshakeOf(conn.raw), undefined);
    cap.handshakeStarts(conn);
    assert.equal(cap.handshakeOf(conn.raw), conn);
    cap.handshakeDone(conn);
    assert.equal(cap.handshakeOf(conn.raw), undefined);
    assert.equal(cap.size, 1, "the connection itself stays open");
  });
});
