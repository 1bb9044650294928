import assert from "node:assert/strict";
import { once } from "node:events";
import { connect as connectH2 } from "node:http2";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { connect as connectTls } from "node:tls";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { redisServerSuite } from "../support/redis-server-suite.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { tlsServiceSuite } from "../support/tls-service-suite.js";

// A client that connects and resets (RST) the connection, at any point of a
// request, is routine (load-balancer TCP checks, port scans, clients that go
// away): the service must go on serving and log at most a debug line.

// In this process the test runner catches what would stop the service (an
// unhandled 'error' event): watch for it, to fail the test that caused it.
const uncaught: Error[] = [];
process.on("uncaughtExceptionMonitor", (err: Error) => uncaught.push(err));
const assertNoneUncaughtSince = (count: number) =>
  assert.deepEqual(uncaught.slice(count).map(String), []);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const H2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const CREATE_PATH = "/perps.token.v1.TokenService/CreateToken";
const CREATE_BODY = JSON.stringify({ userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab", name: "x" });
const HTTP1_CREATE = Buffer.from(
  `POST ${CREATE_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${CREATE_BODY.length}\r\n\r\n${CREATE_BODY}`,
);

/**
 * Connects, sends `bytes`, gives the server a moment to read them, then
 * resets the connection (RST) and waits until it is gone.
 */
async function resetAfter(port: number, bytes: Uint8Array, settleMs = 20): Promise<void> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {
    // The server may answer or close first; the reset is what is tested.
  });
  await once(socket, "connect");
  if (bytes.length > 0) {
    await new Promise<void>((done) => socket.write(bytes, () => done()));
  }
  await sleep(settleMs);
  const closed = once(socket, "close");
  socket.resetAndDestroy();
  await closed;
}

/** The bytes a real client writes on a fresh connection (to a server that only listens). */
async function capture(send: (port: number) => { close(): void }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const server = createServer((socket) => {
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const client = send((server.address() as AddressInfo).port);
  await sleep(200);
  client.close();
  server.close();
  return Buffer.concat(chunks);
}

/** The first bytes of a TLS handshake (ClientHello). */
function clientHello(): Promise<Buffer> {
  return capture((port) => {
    const socket = connectTls({ port, host: "127.0.0.1", rejectUnauthorized: false });
    socket.on("error", () => {});
    return { close: () => socket.destroy() };
  });
}

/** Everything node:http2 writes for one Connect call: preface, SETTINGS, HEADERS, DATA. */
function http2Create(): Promise<Buffer> {
  return capture((port) => {
    const session = connectH2(`http://127.0.0.1:${port}`);
    session.on("error", () => {});
    const stream = session.request({
      ":method": "POST",
      ":path": CREATE_PATH,
      "content-type": "application/json",
    });
    stream.on("error", () => {});
    stream.end(CREATE_BODY);
    return { close: () => session.destroy() };
  });
}

async function http1Status(base: string): Promise<number> {
  return (await fetch(`${base}/healthz`)).status;
}

/** The status of GET /healthz over HTTP/2; `ca` for an https: `base`. */
function http2Status(base: string, ca?: string): Promise<number> {
  return new Promise((done, fail) => {
    const session = connectH2(base, { ca });
    session.on("error", fail);
    const stream = session.request({ ":path": "/healthz" });
    stream.on("response", (headers) => {
      stream.resume();
      stream.on("end", () => {
        session.close();
        done(Number(headers[":status"]));
      });
    });
    stream.on("error", fail);
  });
}

interface LogLine {
  level: number;
  msg: string;
}

const parse = (logs: readonly string[]): LogLine[] =>
  logs.flatMap((chunk) =>
    chunk
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as LogLine),
  );

/** No warning or error, and at most one debug line per reset. */
function assertQuietLogs(logs: readonly string[], resets: number): void {
  const lines = parse(logs);
  assert.deepEqual(
    lines.filter((line) => line.level > 30),
    [],
    "no warning, no error",
  );
  // Answered health probes are debug lines too ("request"); the resets' are the others.
  const debug = lines.filter((line) => line.level === 20 && line.msg !== "request");
  assert.ok(debug.length <= resets, `${debug.length} debug lines for ${resets} resets`);
  assert.ok(debug.length > 0, "resets are seen, at debug level");
}

describe("a reset against npm start's process", () => {
  // Registered before the Redis suite's hook, so the processes go before their Redis.
  after(() => killMainProcesses());
  const { server: redis } = redisServerSuite();

  it("does not stop it: resets before the first byte and after 'P', on both listeners", async () => {
    const run = startMainProcess({ REDIS_URL: redis.url, PUBLIC_PORT: "0", INTERNAL_PORT: "0" });
    const match = (await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/))[0] ?? [];
    const ports = [Number(match[1]), Number(match[2])];
    let exited = false;
    void run.exited.then(() => {
      exited = true;
    });
    for (const port of ports) {
      for (const bytes of ["", "P"]) {
        await resetAfter(port, Buffer.from(bytes));
        await sleep(200);
        assert.equal(exited, false, `died of a reset after "${bytes}":\n${run.output()}`);
        assert.equal(await http1Status(`http://127.0.0.1:${port}`), 200);
      }
    }
    assert.doesNotMatch(run.output(), /ECONNRESET/);
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });
});

describe("resets at every point of a request", () => {
  let redis: TestRedis;
  let service: TestService;
  let hello: Buffer;
  let h2Create: Buffer;
  let resets = 0;
  before(async () => {
    redis = await startTestRedisServer();
    service = await startTestService({ redis: redis.topology, logLevel: "debug" });
    [hello, h2Create] = await Promise.all([clientHello(), http2Create()]);
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  const cases: [string, () => Buffer][] = [
    ["before the first byte", () => Buffer.alloc(0)],
    ["after 1 byte ('P')", () => Buffer.from("P")],
    ["mid HTTP/2 preface", () => Buffer.from(H2_PREFACE.slice(0, 10))],
    ["after a full HTTP/2 preface without SETTINGS", () => Buffer.from(H2_PREFACE)],
    ["mid HTTP/2 request body", () => h2Create.subarray(0, h2Create.length - 5)],
    ["mid HTTP/1 request line", () => Buffer.from("GET /hea")],
    ["mid HTTP/1 headers", () => HTTP1_CREATE.subarray(0, 60)],
    ["mid HTTP/1 body", () => HTTP1_CREATE.subarray(0, HTTP1_CREATE.length - 5)],
    ["after a TLS ClientHello on a cleartext port", () => hello],
  ];
  for (const listener of ["public", "internal"] as const) {
    for (const [name, bytes] of cases) {
      it(`${listener} listener: ${name}`, async () => {
        const uncaughtBefore = uncaught.length;
        const base = listener === "public" ? service.publicUrl : service.internalUrl;
        const port = Number(new URL(base).port);
        await resetAfter(port, bytes());
        resets++;
        await sleep(20);
        assertNoneUncaughtSince(uncaughtBefore);
        assert.equal(await http1Status(base), 200);
        assert.equal(await http2Status(base), 200);
      });
    }
  }

  it("a few hundred resets at random offsets, interleaved with real requests", async () => {
    // A fixed-seed generator: a failure can be replayed.
    const uncaughtBefore = uncaught.length;
    let seed = 12;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const requests = [HTTP1_CREATE, h2Create, hello];
    const bases = [service.publicUrl, service.internalUrl];
    for (let round = 0; round < 30; round++) {
      const base = bases[round % 2] ?? service.publicUrl;
      const port = Number(new URL(base).port);
      const batch: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i++) {
        const request = requests[random(requests.length)] ?? HTTP1_CREATE;
        batch.push(resetAfter(port, request.subarray(0, random(request.length + 1)), random(5)));
      }
      resets += batch.length;
      batch.push(http1Status(base).then((status) => assert.equal(status, 200)));
      batch.push(http2Status(base).then((status) => assert.equal(status, 200)));
      await Promise.all(batch);
    }
    for (const base of bases) {
      assert.equal(await http1Status(base), 200);
      assert.equal(await http2Status(base), 200);
    }
    assertNoneUncaughtSince(uncaughtBefore);
    assertQuietLogs(service.logs, resets);
  });
});

describe("resets on the TLS path", () => {
  const { service, pems } = tlsServiceSuite(startTestRedisServer, { logLevel: "debug" });

  /** A TLS connection on a socket of ours; after the handshake, sends `bytes` and resets. */
  async function resetAfterHandshake(port: number, alpn: string, bytes: string): Promise<void> {
    const raw: Socket = connect(port, "127.0.0.1");
    raw.on("error", () => {});
    await once(raw, "connect");
    const tls = connectTls({
      socket: raw,
      ca: pems.cert,
      servername: "localhost",
      ALPNProtocols: [alpn],
    });
    tls.on("error", () => {});
    await once(tls, "secureConnect");
    if (bytes !== "") {
      await new Promise<void>((done) => tls.write(bytes, () => done()));
    }
    await sleep(20);
    const closed = once(raw, "close");
    raw.resetAndDestroy();
    await closed;
  }

  it("survives resets before, during and after the handshake, on both listeners", async () => {
    const uncaughtBefore = uncaught.length;
    const hello = await clientHello();
    let resets = 0;
    for (const base of [service.publicUrl, service.internalUrl]) {
      const port = Number(new URL(base).port);
      await resetAfter(port, Buffer.alloc(0));
      await resetAfter(port, hello.subarray(0, 20));
      await resetAfter(port, hello);
      await resetAfterHandshake(port, "http/1.1", "");
      await resetAfterHandshake(port, "http/1.1", "GET /heal");
      await resetAfterHandshake(port, "h2", "");
      await resetAfterHandshake(port, "h2", H2_PREFACE.slice(0, 5));
      await resetAfterHandshake(port, "h2", H2_PREFACE);
      resets += 8;
      assert.equal(await http2Status(base.replace("http://", "https://"), pems.cert), 200);
    }
    assertNoneUncaughtSince(uncaughtBefore);
    assertQuietLogs(service.logs, resets);
  });
});
