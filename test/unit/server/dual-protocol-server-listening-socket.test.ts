import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { afterEach, describe, it } from "node:test";
import { listeningSocket } from "../../../src/server/dual-protocol-server.js";

describe("listening socket", () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) {
      server.close();
    }
  });
  function tcpServer(): Server {
    const server = createServer((socket) => socket.destroy());
    servers.push(server);
    return server;
  }

  it("resolves with the bound port, which it keeps, and tells the HTTP/1.1 server it listens", async () => {
    const http1 = createHttpServer();
    const told = once(http1, "listening");
    const socket = listeningSocket(tcpServer(), http1, { host: "127.0.0.1", port: 0 });
    assert.equal(socket.port, 0);
    const port = await socket.listen();
    assert.ok(port > 0);
    assert.equal(socket.port, port);
    await told;
    http1.close();
  });

  it("rejects when the port is taken", async () => {
    const first = listeningSocket(tcpServer(), createHttpServer(), { host: "127.0.0.1", port: 0 });
    const port = await first.listen();
    const second = listeningSocket(tcpServer(), createHttpServer(), { host: "127.0.0.1", port });
    await assert.rejects(second.listen(), { code: "EADDRINUSE" });
    assert.equal(second.port, 0);
  });

  it("once listening, reports the listening socket's errors and goes on", async () => {
    const errors: string[] = [];
    const tcp = tcpServer();
    const socket = listeningSocket(tcp, createHttpServer(), {
      host: "127.0.0.1",
      port: 0,
      onServerError: (err) => errors.push(err.message),
    });
    await socket.listen();
    // What node emits when accepting fails (EMFILE): not the end of the listener.
    tcp.emit("error", new Error("accept failed"));
    assert.deepEqual(errors, ["accept failed"]);
    assert.equal(tcp.listening, true);
  });
});
