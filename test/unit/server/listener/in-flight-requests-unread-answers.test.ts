import assert from "node:assert/strict";
import { createServer as createHttp1Server } from "node:http";
import {
  type ClientHttp2Session,
  connect,
  createServer as createHttp2Server,
  constants as h2,
  type ServerHttp2Stream,
} from "node:http2";
import { type AddressInfo, connect as connectTcp, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createUnreadAnswers,
  type UnreadAnswers,
} from "../../../../src/server/listener/in-flight-requests.js";
import { within } from "../../../support/held-stream.js";

const SWEEP_MS = 100;
/** Not a speed goal: a deadline that never acts fails the test rather than hang it. */
const BOUND_MS = 10_000;

describe("the answer deadline, on raw HTTP/2 streams", () => {
  let deadline: UnreadAnswers;
  // What the server writes on each stream, by its path.
  const answers: Record<string, (stream: ServerHttp2Stream) => void> = {
    // More than a window of 0 lets through: it waits for the client.
    "/large": (stream) => {
      stream.respond({ ":status": 200 });
      stream.end(Buffer.alloc(256 * 1024));
    },
    // Headers only, then nothing for a while: nothing waits (a health Watch between messages).
    "/idle": (stream) => {
      stream.respond({ ":status": 200 });
      setTimeout(() => stream.end("done"), 5 * SWEEP_MS);
    },
  };
  const server = createHttp2Server();
  server.on("stream", (stream, headers) => {
    deadline.watch(stream);
    answers[String(headers[":path"])]?.(stream);
  });
  let url = "";

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A session whose window lets no data through (0), or the usual one. */
  async function session(windowZero: boolean): Promise<ClientHttp2Session> {
    const opened = connect(url, windowZero ? { settings: { initialWindowSize: 0 } } : {});
    await new Promise<void>((resolve, reject) => {
      opened.once("remoteSettings", () => resolve());
      opened.once("error", reject);
    });
    return opened;
  }

  /** GET `path`: the status, the bytes that came, and the code the stream closed with. */
  function get(on: ClientHttp2Session, path: string) {
    const stream = on.request({ ":path": path });
    stream.on("error", () => {
      // A reset stream errors on the client; its rstCode says why.
    });
    let status = 0;
    let bytes = 0;
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    return new Promise<{ status: number; bytes: number; rstCode: number }>((resolve) =>
      stream.on("close", () => resolve({ status, bytes, rstCode: stream.rstCode ?? -1 })),
    );
  }

  it("resets (CANCEL) a stream whose client takes none of the answer in; the session goes on", async () => {
    deadline = createUnreadAnswers(SWEEP_MS);
    const stalled = await session(true);
    try {
      const answer = await within(get(stalled, "/large"), BOUND_MS, "the reset");
      assert.equal(answer.status, 200, "the answer had begun");
      assert.equal(answer.bytes, 0);
      assert.equal(answer.rstCode, h2.NGHTTP2_CANCEL);
      await new Promise<void>((resolve, reject) =>
        stalled.ping((err) => (err === null ? resolve() : reject(err))),
      );
    } finally {
      stalled.destroy();
      deadline.stop();
    }
  });

  it("leaves alone an answer its client takes in, and one with nothing waiting", async () => {
    deadline = createUnreadAnswers(SWEEP_MS);
    const reading = await session(false);
    try {
      const [large, idle] = await Promise.all([get(reading, "/large"), get(reading, "/idle")]);
      assert.deepEqual(large, { status: 200, bytes: 256 * 1024, rstCode: h2.NGHTTP2_NO_ERROR });
      assert.deepEqual(idle, { status: 200, bytes: 4, rstCode: h2.NGHTTP2_NO_ERROR });
    } finally {
      reading.destroy();
      deadline.stop();
    }
  });

  it("resets nothing once stopped", async () => {
    deadline = createUnreadAnswers(SWEEP_MS);
    const stalled = await session(true);
    try {
      const answer = get(stalled, "/large");
      await sleep(SWEEP_MS / 2);
      deadline.stop();
      const closed = await Promise.race([answer, sleep(4 * SWEEP_MS, "open")]);
      assert.equal(closed, "open");
    } finally {
      stalled.destroy();
    }
  });
});

describe("the answer deadline, on HTTP/1.1 responses", () => {
  const deadline = createUnreadAnswers(SWEEP_MS);
  const ANSWER_BYTES = 32 * 1024 * 1024;
  // The request's connection, and its response's close (wrapped: a promise of a promise is flattened).
  let answering: (answer: { closed: Promise<Socket> }) => void = () => {};
  const server = createHttp1Server((req, res) => {
    deadline.watch(res);
    const { socket } = req;
    answering({
      closed: new Promise<Socket>((resolve) => res.once("close", () => resolve(socket))),
    });
    res.writeHead(200, { "content-type": "application/octet-stream" });
    // More than the sockets' buffers hold: the rest waits in node for the client.
    res.end(Buffer.alloc(ANSWER_BYTES));
  });
  let port = 0;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    deadline.stop();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("closes the connection of a client that stops reading", async () => {
    const answered = new Promise<{ closed: Promise<Socket> }>((resolve) => {
      answering = resolve;
    });
    const client = connectTcp(port, "127.0.0.1");
    try {
      client.write("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
      // The client reads nothing until the server gave up on it.
      client.pause();
      const socket = await within((await answered).closed, BOUND_MS, "the close");
      assert.equal(socket.destroyed, true, "its connection is closed");
      // What the client can still read is what had left node: not the whole answer.
      let received = 0;
      client.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      await new Promise((resolve) => client.once("close", resolve).resume());
      assert.ok(received < ANSWER_BYTES, `${received} bytes came`);
    } finally {
      client.destroy();
    }
  });
});
