import assert from "node:assert/strict";
import { once } from "node:events";
import {
  type ClientHttp2Session,
  connect as connectH2,
  createServer as createHttp2Server,
  type Http2Session,
  type ServerHttp2Stream,
} from "node:http2";
import { type AddressInfo, createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Connection } from "../../../../src/server/listener/connection-cap.js";
import {
  type Http2Sessions,
  trackHttp2Sessions,
} from "../../../../src/server/listener/http2-sessions.js";
import { until } from "../../../support/until.js";

describe("HTTP/2 sessions", () => {
  let tcp: Server;
  let sessions: Http2Sessions;
  const connections: Connection[] = [];
  const streams: ServerHttp2Stream[] = [];
  before(async () => {
    const h2 = createHttp2Server();
    sessions = trackHttp2Sessions(h2);
    h2.on("stream", (stream: ServerHttp2Stream) => {
      sessions.streamOpened(stream);
      stream.on("close", () => sessions.streamClosed(stream));
      streams.push(stream);
    });
    tcp = createServer((raw) => {
      const conn: Connection = { raw, peer: `${raw.remotePort}` };
      connections.push(conn);
      sessions.handOver(conn, raw);
    });
    tcp.listen(0, "127.0.0.1");
    await once(tcp, "listening");
  });
  after(() => tcp.close());

  function client(): ClientHttp2Session {
    const session = connectH2(`http://127.0.0.1:${(tcp.address() as AddressInfo).port}`);
    session.on("error", () => {});
    return session;
  }

  it("opens a session for a connection handed over, and knows the connection by it", async () => {
    const session = client();
    await until(() => connections.length === 1 && sessions.open.size === 1);
    const [opened] = [...sessions.open] as [Http2Session];
    const conn = connections[0];
    assert.equal(sessions.connectionOf(opened), conn);
    assert.equal(conn?.session, opened);
    session.close();
    await until(() => sessions.open.size === 0);
  });

  it("counts the streams open on each session, and when the count last changed", async () => {
    const session = client();
    await until(() => sessions.open.size === 1);
    const [opened] = [...sessions.open] as [Http2Session];
    const activity = sessions.activityOf(opened);
    assert.equal(activity?.open, 0);
    const since = activity?.since ?? 0;
    const first = session.request({ ":path": "/" });
    const second = session.request({ ":path": "/" });
    first.on("error", () => {});
    second.on("error", () => {});
    await until(() => activity?.open === 2);
    assert.ok((activity?.since ?? 0) >= since);
    streams.at(-1)?.close();
    await until(() => activity?.open === 1);
    session.destroy();
    await until(() => sessions.open.size === 0);
    assert.equal(activity?.open, 0, "the closed session's streams are closed with it");
  });
});
