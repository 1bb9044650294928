import assert from "node:assert/strict";
import { once } from "node:events";
import {
  type ClientHttp2Session,
  connect as connectH2,
  createServer as createHttp2Server,
} from "node:http2";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, it } from "node:test";
import {
  type ConnectionCap,
  createConnectionCap,
} from "../../../../src/server/listener/connection-cap.js";
import {
  type Http2SessionLimits,
  type Http2Sessions,
  startHttp2SessionLimits,
  trackHttp2Sessions,
} from "../../../../src/server/listener/http2-sessions.js";
import { until } from "../../../support/until.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Listener {
  port: number;
  sessions: Http2Sessions;
  connections: ConnectionCap;
  limits: Http2SessionLimits;
  /** Client errors reported, as "source: message". */
  reported: string[];
}

describe("HTTP/2 session limits", () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) {
      stop();
    }
  });

  /** A cleartext HTTP/2 listener whose sessions are held to the limits. */
  async function listener(
    idleTimeoutMs: number,
    pingTimeoutMs: number,
    pingIntervalMs = 20,
  ): Promise<Listener> {
    const reported: string[] = [];
    const report = (err: Error, source: string) => reported.push(`${source}: ${err.message}`);
    const h2 = createHttp2Server();
    h2.on("stream", () => {}); // Never answered.
    const sessions = trackHttp2Sessions(h2);
    h2.on("stream", (stream) => {
      sessions.streamOpened(stream);
      stream.on("close", () => sessions.streamClosed(stream));
    });
    const connections = createConnectionCap({ maxConnections: 10, report });
    const tcp: Server = createServer((raw) => {
      const conn = connections.accept(raw);
      if (conn !== undefined) {
        sessions.handOver(conn, raw);
      }
    });
    tcp.listen(0, "127.0.0.1");
    await once(tcp, "listening");
    const limits = startHttp2SessionLimits({
      sessions,
      connections,
      report,
      idleTimeoutMs,
      pingIntervalMs,
      pingTimeoutMs,
    });
    stops.push(() => {
      limits.closeSessions();
      connections.endAll();
      tcp.close();
    });
    return { port: (tcp.address() as AddressInfo).port, sessions, connections, limits, reported };
  }

  function client(port: number): ClientHttp2Session {
    const session = connectH2(`http://127.0.0.1:${port}`);
    session.on("error", () => {});
    return session;
  }

  it("closes a session with no stream open for the idle time (GOAWAY), not one with a stream open", async () => {
    const { port, sessions, reported } = await listener(100, 5000);
    const session = client(port);
    const stream = session.request({ ":path": "/" });
    stream.on("error", () => {});
    let toldGoAway = false;
    session.on("goaway", () => {
      toldGoAway = true;
    });
    await until(() => sessions.open.size === 1);
    // Many idle times and PINGs (answered by the client) with the stream open.
    await sleep(500);
    assert.equal(toldGoAway, false, "a session with a stream open is not idle");
    stream.close();
    await once(session, "close");
    assert.equal(toldGoAway, true);
    assert.deepEqual(reported, []);
  });

  it("ends a session that does not answer a PING in time, and its connection", async () => {
    const { port, sessions, connections, reported } = await listener(60_000, 50);
    const raw = connect(port, "127.0.0.1");
    raw.on("error", () => {});
    raw.on("data", () => {}); // Reads all, answers nothing.
    // The client preface and an empty SETTINGS frame: a session, then silence.
    raw.write(Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
    raw.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    await until(() => sessions.open.size === 1);
    await once(raw, "close");
    assert.deepEqual(reported, ["http2-session: no answer to a PING within 50 ms"]);
    await until(() => connections.size === 0 && sessions.open.size === 0);
  });

  /** A client that sends the preface and SETTINGS, then reads all and answers nothing, never ending its side. */
  async function quietClient(port: number): Promise<Socket> {
    const raw = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    raw.on("error", () => {});
    raw.on("data", () => {});
    raw.write(Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
    raw.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    return raw;
  }

  it("checks every session at once when asked (a full cap), with a deadline of at most 1 s", async () => {
    // Neither the interval (1 min) nor its deadline (1 min) would end it within the test.
    const { port, sessions, connections, limits, reported } = await listener(
      60_000,
      60_000,
      60_000,
    );
    const raw = await quietClient(port);
    await until(() => sessions.open.size === 1);
    const since = Date.now();
    limits.checkNow();
    limits.checkNow(); // At most one check a deadline: one PING, one report.
    await until(() => connections.size === 0);
    assert.ok(Date.now() - since < 1500, `ended after ${Date.now() - since} ms`);
    assert.deepEqual(reported, ["http2-session: no answer to a PING within 1000 ms"]);
    raw.destroy();
  });

  it("ends the connection of a session destroyed whose socket stays open", async () => {
    // Node ends the socket of a closed session and waits for the peer's end,
    // which this client never sends: the session's 'close' would never come.
    const { port, sessions, connections } = await listener(60_000, 60_000);
    const raw = await quietClient(port);
    await until(() => sessions.open.size === 1);
    const [session] = sessions.open;
    session?.close();
    await until(() => connections.size === 0 && sessions.open.size === 0);
    raw.destroy();
  });

  it("on close: every session is sent a GOAWAY, and the periodic checks stop", async () => {
    const { port, sessions, limits, reported } = await listener(60_000, 5000);
    const session = client(port);
    await until(() => sessions.open.size === 1);
    const goAway = once(session, "goaway");
    limits.closeSessions();
    await goAway;
    await once(session, "close");
    // The client's session closes first; the server's follows a moment later.
    await until(() => sessions.open.size === 0);
    assert.deepEqual(reported, []);
  });
});
