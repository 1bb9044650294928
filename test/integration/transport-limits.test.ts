import assert from "node:assert/strict";
import { once } from "node:events";
import { connect as connectH2, type IncomingHttpHeaders } from "node:http2";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { redisServerSuite } from "../support/redis-server-suite.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// The limits of the transport layer (REQUEST_TIMEOUT_MS for HTTP/1.1 and
// HTTP/2 alike, MAX_CONNECTIONS_PER_LISTENER) and the answers it gives by
// itself, which carry an x-request-id and are logged and counted like every
// other answer.

const REQUEST_TIMEOUT_MS = 1500;
const MAX_CONNECTIONS = 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CREATE_PATH = "/perps.token.v1.TokenService/CreateToken";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const portOf = (base: string) => Number(new URL(base).port);

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** Everything received. */
  text: string;
  /** Milliseconds from the first byte sent until the server closed the connection. */
  closedAfterMs: number;
}

/** Parses a whole HTTP/1.1 answer (the server closes the connection after it). */
function parseAnswer(text: string, closedAfterMs: number): RawAnswer {
  const [head = "", body = ""] = text.split("\r\n\r\n");
  const [statusLine = "", ...fields] = head.split("\r\n");
  const headers = new Map(
    fields.map((field) => {
      const at = field.indexOf(":");
      return [field.slice(0, at).toLowerCase(), field.slice(at + 1).trim()] as const;
    }),
  );
  return { status: Number(statusLine.split(" ")[1]), headers, body, text, closedAfterMs };
}

/**
 * Sends `first`, then one byte of `trickle` a second (if any), and resolves
 * with what came back once the server closes the connection.
 */
function rawHttp1(port: number, first: string, trickle = ""): Promise<RawAnswer> {
  return new Promise((done, fail) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let started = 0;
    let sent = 0;
    const ticker = setInterval(() => {
      if (sent < trickle.length && !socket.destroyed) {
        socket.write(trickle.charAt(sent++));
      }
    }, 1000);
    const guard = setTimeout(() => {
      socket.destroy();
      fail(new Error(`the server kept the connection open; got: ${text}`));
    }, 8000);
    socket.on("connect", () => {
      started = Date.now();
      socket.write(first);
    });
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.on("error", () => {
      // A close with unread bytes may come as a reset; the answer was read before.
    });
    socket.on("close", () => {
      clearInterval(ticker);
      clearTimeout(guard);
      done(parseAnswer(text, Date.now() - started));
    });
  });
}

/** Whether a new connection is served (true) or closed unanswered (false). */
function isServed(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    });
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.on("error", () => {});
    socket.on("close", () => done(text.startsWith("HTTP/1.1 200")));
  });
}

/** Waits until a new connection is served again (the server counts one until it has seen it close). */
async function servedAgain(port: number): Promise<boolean> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    if (await isServed(port)) {
      return true;
    }
    await sleep(50);
  }
  return false;
}

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  [field: string]: unknown;
}

function logLineOf(service: TestService, requestId: string): LogLine | undefined {
  return service.logs
    .flatMap((chunk) => chunk.split("\n").filter((line) => line !== ""))
    .map((line) => JSON.parse(line) as LogLine)
    .find((line) => line.requestId === requestId);
}

async function transportCount(service: TestService, code: string): Promise<number> {
  const text = await (await fetch(`${service.internalUrl}/metrics`)).text();
  const series = `perps_token_requests_total{method="http",protocol="http",code="${code}"}`;
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe("transport limits and answers", () => {
  let redis: TestRedis;
  let service: TestService;
  before(async () => {
    redis = await startTestRedisServer();
    service = await startTestService({
      redis: redis.topology,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      maxConnectionsPerListener: MAX_CONNECTIONS,
    });
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  /** Asserts the answer's id has its log line and the metric moved by one. */
  async function assertObservable(
    requestId: string | undefined,
    expected: { protocol: string; code: string; metricCode: string; countBefore: number },
  ): Promise<void> {
    assert.match(requestId ?? "", UUID);
    const line = logLineOf(service, requestId ?? "");
    assert.ok(line, "a log line with the request id");
    assert.equal(line.level, 30);
    assert.equal(line.msg, "request");
    assert.equal(line.method, "http");
    assert.equal(line.protocol, expected.protocol);
    assert.equal(line.code, expected.code);
    assert.equal(typeof line.message, "string");
    assert.equal(await transportCount(service, expected.metricCode), expected.countBefore + 1);
  }

  it("logs a stream the server reset with PROTOCOL_ERROR (issue 34): an info line with the code", async () => {
    const session = connectH2(service.publicUrl);
    session.on("error", () => {});
    try {
      // Says 10 bytes, sends 3: HTTP/2 makes that a stream error (RFC 9113, 8.1.1).
      const stream = session.request({
        ":method": "POST",
        ":path": CREATE_PATH,
        "content-type": "application/json",
        "content-length": "10",
      });
      const failed = new Promise<string>((resolve) =>
        stream.on("error", (err: Error & { code?: string }) => resolve(err.message)),
      );
      stream.resume();
      stream.end("abc");
      assert.match(await failed, /NGHTTP2_PROTOCOL_ERROR/);
      await sleep(100);
    } finally {
      session.destroy();
    }
    const lines = service.logs
      .flatMap((chunk) => chunk.split("\n").filter((line) => line !== ""))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "client protocol error");
    assert.equal(lines.length, 1, "one line for the protocol error");
    assert.equal(lines[0]?.level, 30);
    assert.equal(lines[0]?.h2Code, "NGHTTP2_PROTOCOL_ERROR");
    assert.equal(lines[0]?.listener, "public");
  });

  it("answers a garbage request line 400 with x-request-id, a log line and a count", async () => {
    const countBefore = await transportCount(service, "invalid_argument");
    const answer = await rawHttp1(portOf(service.publicUrl), "HELLO?\r\n\r\n");
    assert.equal(answer.status, 400);
    assert.equal(answer.headers.get("content-type"), "application/json");
    assert.deepEqual(JSON.parse(answer.body), {
      code: 3,
      message: "malformed HTTP request",
      details: [],
    });
    await assertObservable(answer.headers.get("x-request-id"), {
      protocol: "http1",
      code: "InvalidArgument",
      metricCode: "invalid_argument",
      countBefore,
    });
  });

  it("answers garbage after an answered request on the same connection 400 with x-request-id", async () => {
    const answer = await rawHttp1(
      portOf(service.publicUrl),
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHELLO?\r\n\r\n",
    );
    assert.equal(answer.status, 200);
    const second = answer.text.slice(answer.text.indexOf("HTTP/1.1 ", 1));
    const refusal = parseAnswer(second, answer.closedAfterMs);
    assert.equal(refusal.status, 400);
    assert.match(refusal.headers.get("x-request-id") ?? "", UUID);
  });

  it("answers garbage sent after an answer was received on the same connection 400 with x-request-id", async () => {
    const socket = connect(portOf(service.publicUrl), "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    await once(socket, "data");
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.write("HELLO?\r\n\r\n");
    await once(socket, "close");
    const refusal = parseAnswer(text, 0);
    assert.equal(refusal.status, 400);
    assert.match(refusal.headers.get("x-request-id") ?? "", UUID);
  });

  it("answers too large headers 431 with x-request-id, a log line and a count", async () => {
    const countBefore = await transportCount(service, "resource_exhausted");
    const answer = await rawHttp1(
      portOf(service.internalUrl),
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    assert.equal(answer.status, 431);
    assert.equal(JSON.parse(answer.body).code, 8);
    await assertObservable(answer.headers.get("x-request-id"), {
      protocol: "http1",
      code: "ResourceExhausted",
      metricCode: "resource_exhausted",
      countBefore,
    });
  });

  it("answers an unsupported Expect 417 with x-request-id, a log line and a count", async () => {
    const countBefore = await transportCount(service, "failed_precondition");
    const answer = await rawHttp1(
      portOf(service.publicUrl),
      "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: magic\r\nConnection: close\r\n\r\n",
    );
    assert.equal(answer.status, 417);
    assert.equal(JSON.parse(answer.body).code, 9);
    await assertObservable(answer.headers.get("x-request-id"), {
      protocol: "http1",
      code: "FailedPrecondition",
      metricCode: "failed_precondition",
      countBefore,
    });
  });

  it("cuts an HTTP/1.1 request that trickles at REQUEST_TIMEOUT_MS: 408 with x-request-id", async () => {
    const countBefore = await transportCount(service, "deadline_exceeded");
    const answer = await rawHttp1(
      portOf(service.publicUrl),
      `POST ${CREATE_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      "x".repeat(99),
    );
    assert.equal(answer.status, 408);
    // Node checks HTTP/1.1 timeouts once a second.
    assert.ok(
      answer.closedAfterMs >= REQUEST_TIMEOUT_MS - 100 && answer.closedAfterMs < 5000,
      `closed after ${answer.closedAfterMs} ms`,
    );
    await assertObservable(answer.headers.get("x-request-id"), {
      protocol: "http1",
      code: "DeadlineExceeded",
      metricCode: "deadline_exceeded",
      countBefore,
    });
  });

  it("cuts an HTTP/2 stream that trickles at REQUEST_TIMEOUT_MS: 408, then reset; the session lives on", () =>
    trickleOverHttp2("application/json", "{", "connect"));

  it("cuts a gRPC call served off the raw HTTP/2 stream that trickles at REQUEST_TIMEOUT_MS, the same way", () =>
    // The envelope's head promises 100 bytes that never all come.
    trickleOverHttp2("application/grpc", Buffer.of(0, 0, 0, 0, 100), "grpc"));

  /**
   * A stream whose request never ends is answered 408 and reset at the
   * request timeout, with one log line and count under its id; the session
   * goes on; the answer is counted under the call's `protocol`.
   */
  async function trickleOverHttp2(contentType: string, first: string | Buffer, protocol: string) {
    const countBefore = await transportCount(service, "deadline_exceeded");
    const session = connectH2(service.publicUrl);
    session.on("error", () => {});
    try {
      const started = Date.now();
      const stream = session.request({
        ":method": "POST",
        ":path": CREATE_PATH,
        "content-type": contentType,
      });
      stream.on("error", () => {});
      stream.write(first);
      const ticker = setInterval(() => {
        if (!stream.destroyed) {
          stream.write(" ");
        }
      }, 1000);
      let headers: IncomingHttpHeaders = {};
      let body = "";
      stream.on("response", (h) => {
        headers = h;
      });
      stream.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      const closed = await Promise.race([
        once(stream, "close").then(() => Date.now() - started),
        sleep(6000).then(() => -1),
      ]);
      clearInterval(ticker);
      assert.ok(closed >= REQUEST_TIMEOUT_MS - 100, `stream closed after ${closed} ms`);
      assert.ok(closed < 4000, "the stream outlived the request timeout");
      assert.equal(headers[":status"], 408);
      assert.equal(JSON.parse(body).code, 4);
      // The stream reached the handler, so the exchange's own telemetry tells
      // the answer: one line and one count, under the id the exchange was given.
      const requestId = headers["x-request-id"];
      assert.match(typeof requestId === "string" ? requestId : "", UUID);
      await sleep(200);
      const lines = service.logs
        .flatMap((chunk) => chunk.split("\n").filter((line) => line !== ""))
        .map((line) => JSON.parse(line) as LogLine)
        .filter((line) => line.requestId === requestId);
      assert.equal(lines.length, 1, "exactly one log line for the answer");
      assert.equal(lines[0]?.code, "DeadlineExceeded");
      assert.equal(await transportCount(service, "deadline_exceeded"), countBefore);
      const metrics = await (await fetch(`${service.internalUrl}/metrics`)).text();
      assert.match(
        metrics,
        new RegExp(
          `perps_token_requests_total\\{[^}]*protocol="${protocol}",code="deadline_exceeded"\\} 1`,
        ),
      );
      // The session was not harmed: a new stream on it is served.
      const status = await new Promise<unknown>((done, fail) => {
        const next = session.request({ ":path": "/healthz" });
        next.on("response", (h) => done(h[":status"]));
        next.on("error", fail);
        next.resume();
      });
      assert.equal(status, 200);
    } finally {
      session.destroy();
    }
  }

  /** A keep-alive HTTP/1.1 connection with one request answered on it. */
  async function openConnection(port: number): Promise<Socket> {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    assert.equal(await getHealth(socket), 200);
    return socket;
  }

  async function getHealth(socket: Socket): Promise<number> {
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const [chunk] = (await once(socket, "data")) as [Buffer];
    return Number(chunk.toString().split(" ")[1]);
  }

  it("refuses connections over MAX_CONNECTIONS_PER_LISTENER, serves the others, accepts again after closes", async () => {
    const port = portOf(service.publicUrl);
    const open: Socket[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        open.push(await openConnection(port));
      }
      assert.equal(await isServed(port), false, "a connection over the cap is refused");
      // The other listener has a cap of its own.
      assert.equal(await isServed(portOf(service.internalUrl)), true);
      for (const socket of open) {
        assert.equal(await getHealth(socket), 200, "the connections within the cap still work");
      }
      const closing = open.splice(0, 2);
      await Promise.all(closing.map((socket) => once(socket.end(), "close")));
      assert.equal(await servedAgain(port), true, "accepted again after closes");
      assert.equal(await isServed(port), true, "two were closed, so a second one fits too");
    } finally {
      for (const socket of open) {
        socket.destroy();
      }
    }
    assert.deepEqual(
      service.logs.filter((line) => /"level":(40|50|60)/.test(line)),
      [],
      "no warning, no error",
    );
  });
});

describe("npm start's process", () => {
  // Registered before the Redis suite's hook, so the processes go before their Redis.
  after(() => killMainProcesses());
  const { server: redis } = redisServerSuite();

  it("takes REQUEST_TIMEOUT_MS and MAX_CONNECTIONS_PER_LISTENER from the environment", async () => {
    const run = startMainProcess({
      REDIS_URL: redis.url,
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      REQUEST_TIMEOUT_MS: "1000",
      MAX_CONNECTIONS_PER_LISTENER: "1",
      // The cap is per listener and process: one process, so the second connection meets it.
      WORKERS: "1",
    });
    const match = (await run.waitFor(/"publicPort":(\d+)/))[0] ?? [];
    const port = Number(match[1]);
    const first = connect(port, "127.0.0.1");
    first.on("error", () => {});
    try {
      await once(first, "connect");
      await sleep(100);
      const second = await rawHttp1(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
      assert.equal(second.text, "", "the second connection is refused");
    } finally {
      first.destroy();
    }
    assert.equal(await servedAgain(port), true);
    const started = Date.now();
    const answer = await rawHttp1(
      port,
      `POST ${CREATE_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      "x".repeat(99),
    );
    assert.equal(answer.status, 408);
    assert.ok(Date.now() - started < 4000, "cut at about a second, not 30");
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0);
  });
});
