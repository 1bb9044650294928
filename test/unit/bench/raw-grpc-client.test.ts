import assert from "node:assert/strict";
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { grpcFrame } from "../../../bench/grpc-frame.js";
import { connectRawGrpc, type RawGrpcClient } from "../../../bench/raw-grpc-client.js";

/** A node:http2 gRPC server: echoes the request's message, or answers trailers-only for /Fail. */
function startEchoServer(): Promise<{ server: Http2Server; address: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer();
  server.on("stream", (stream, headers) => {
    seen.push(`${headers[":path"]} ${headers["content-type"]} ${headers.te}`);
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      if (headers[":path"] === "/Fail") {
        stream.respond(
          { ":status": 200, "content-type": "application/grpc", "grpc-status": "5" },
          { endStream: true },
        );
        return;
      }
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      // /Lie answers a message, then an error status: its status decides.
      const status = headers[":path"] === "/Lie" ? "13" : "0";
      stream.once("wantTrailers", () =>
        stream.sendTrailers({ "grpc-status": status, "x-pad": "y".repeat(seen.length) }),
      );
      stream.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, address: `127.0.0.1:${port}`, seen });
    }),
  );
}

const call = (client: RawGrpcClient, frame: Buffer) =>
  new Promise<[string | undefined, number]>((resolve) =>
    client.call(frame, (failure, length) => resolve([failure, length])),
  );

describe("connectRawGrpc", () => {
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  before(async () => {
    echo = await startEchoServer();
  });
  after(() => echo.server.close());

  it("sends gRPC requests a node:http2 server reads, and reads their answers' lengths", async () => {
    const client = await connectRawGrpc({ address: echo.address, path: "/Echo", connections: 2 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(client, grpcFrame(new Uint8Array(i)))),
    );
    client.close();
    assert.deepEqual(
      answers,
      Array.from({ length: 50 }, (_, i) => [undefined, i]),
    );
    assert.equal(echo.seen[0], "/Echo application/grpc trailers");
  });

  it("reports a trailers-only answer (a gRPC error) as a failure with its status", async () => {
    const client = await connectRawGrpc({ address: echo.address, path: "/Fail", connections: 1 });
    assert.deepEqual(await call(client, grpcFrame(new Uint8Array(3))), ["grpc-status 5", 0]);
    client.close();
  });

  it("judges an answer by its trailers' grpc-status, not by its message", async () => {
    const client = await connectRawGrpc({ address: echo.address, path: "/Lie", connections: 1 });
    // Several calls on one connection: the trailers are indexed in HPACK's dynamic table.
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => call(client, grpcFrame(new Uint8Array(2)))),
    );
    client.close();
    assert.deepEqual(
      answers,
      Array.from({ length: 5 }, () => ["grpc-status 13", 0]),
    );
  });

  it("fails the calls in flight when the connection closes", async () => {
    const client = await connectRawGrpc({ address: echo.address, path: "/Echo", connections: 1 });
    const pending = call(client, grpcFrame(new Uint8Array(1)));
    client.close();
    assert.deepEqual(await pending, ["transport", 0]);
  });

  it("opens no more streams than the server's SETTINGS_MAX_CONCURRENT_STREAMS: the rest wait", async () => {
    // node:http2 ends the whole connection (GOAWAY, PROTOCOL_ERROR) when a client opens more.
    const server = createServer({ settings: { maxConcurrentStreams: 10 } });
    let open = 0;
    let most = 0;
    server.on("stream", (stream) => {
      open++;
      most = Math.max(most, open);
      stream.on("close", () => {
        open--;
      });
      stream.resume();
      stream.on("end", () =>
        // Answered a little later, so that calls pile up.
        setTimeout(() => {
          stream.respond(
            { ":status": 200, "content-type": "application/grpc" },
            { waitForTrailers: true },
          );
          stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
          stream.end(grpcFrame(new Uint8Array(1)));
        }, 2),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await connectRawGrpc({
      address: `127.0.0.1:${port}`,
      path: "/Echo",
      connections: 1,
    });
    // Once the server's SETTINGS are in: the first calls may go out before them (100 assumed).
    await call(client, grpcFrame(new Uint8Array(1)));
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => call(client, grpcFrame(new Uint8Array(1)))),
    );
    client.close();
    server.close();
    assert.deepEqual(
      answers,
      Array.from({ length: 60 }, () => [undefined, 1]),
    );
    assert.ok(most <= 10, `the server saw ${most} streams open at once`);
  });

  it("spreads calls over its connections, the least busy first", async () => {
    const server = createServer();
    const perSession = new Map<unknown, number>();
    const held: (() => void)[] = [];
    server.on("stream", (stream) => {
      perSession.set(stream.session, (perSession.get(stream.session) ?? 0) + 1);
      stream.resume();
      // Held until all have arrived: every call is in flight at once.
      held.push(() => {
        stream.respond(
          { ":status": 200, "content-type": "application/grpc" },
          { waitForTrailers: true },
        );
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(grpcFrame(new Uint8Array(1)));
      });
      if (held.length === 9) {
        for (const answer of held) {
          answer();
        }
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await connectRawGrpc({
      address: `127.0.0.1:${port}`,
      path: "/Echo",
      connections: 3,
    });
    await Promise.all(Array.from({ length: 9 }, () => call(client, grpcFrame(new Uint8Array(1)))));
    client.close();
    server.close();
    assert.deepEqual([...perSession.values()], [3, 3, 3]);
  });
});
