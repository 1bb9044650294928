import assert from "node:assert/strict";
import { connect as connectH2, type IncomingHttpHeaders } from "node:http2";
import { connect as connectTcp } from "node:net";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { samples } from "../support/prometheus-samples.js";
import { rawExchange } from "../support/raw-exchange.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Every answer the service gives, whoever gives it (a plain endpoint, the REST
// gateway before the call, Connect before the interceptors, or a call), carries
// the request id, writes exactly one log line with it and is counted exactly
// once in perps_token_requests_total.

const CREATE = "perps.token.v1.TokenService/CreateToken";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Labels {
  method: string;
  protocol: string;
  /** The metric's code label, e.g. "invalid_argument". */
  code: string;
}

/** What the log line says of the code: "ok" or the Code's name. */
const CODE_NAMES: Record<string, string> = {
  ok: "ok",
  invalid_argument: "InvalidArgument",
  not_found: "NotFound",
  unimplemented: "Unimplemented",
};

interface Answer {
  status: number;
  /** The x-request-id response header. */
  requestId: string | undefined;
}

type Fields = Record<string, string | bigint | number | undefined>;
const json = (fields: Fields) =>
  JSON.stringify(fields, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));

/** A gRPC / gRPC-Web message envelope. */
function envelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

interface H2Answer {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request over HTTP/2 with prior knowledge (as gRPC clients send it), answer and trailers read in full. */
function h2Request(
  baseUrl: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const session = connectH2(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", te: "trailers", ...headers });
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      responseHeaders = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("end", () => {
      session.close();
      resolve({ headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

describe("every answer is observable", () => {
  let redis: TestRedis;
  let service: TestService;
  let user: TestUser;
  // GET /metrics answers are themselves counted ({method="http",protocol="http",code="ok"}).
  let metricsReads = 0;
  let nextId = 0;

  before(async () => {
    redis = await startTestRedis();
    // Debug: health probes' lines are debug lines (the next suite checks info).
    service = await startTestService({ redis: redis.topology, logLevel: "debug" });
    user = await newUser();
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    try {
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    } finally {
      keys.close();
    }
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  const seriesName = (l: Labels) =>
    `perps_token_requests_total{method="${l.method}",protocol="${l.protocol}",code="${l.code}"}`;

  /**
   * The count of a series read from GET /metrics on the internal listener,
   * less the earlier /metrics reads when the series is theirs.
   */
  async function count(labels: Labels): Promise<number> {
    const res = await fetch(`${service.internalUrl}/metrics`);
    assert.equal(res.status, 200);
    const value = samples(await res.text()).get(seriesName(labels)) ?? 0;
    const earlierReads = metricsReads;
    metricsReads++;
    const isMetricsSeries =
      labels.method === "http" && labels.protocol === "http" && labels.code === "ok";
    return isMetricsSeries ? value - earlierReads : value;
  }

  /** The log lines (parsed) that carry this request id. */
  function linesOf(requestId: string): Record<string, unknown>[] {
    return service.logs
      .join("")
      .split("\n")
      .filter((line) => line.includes(requestId))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.requestId === requestId);
  }

  /**
   * Sends one request (with an acceptable x-request-id of ours, or with
   * `given` as the header, or none) and checks the three: the id in the
   * response header, exactly one log line with it, exactly one count.
   */
  async function expectObserved(
    labels: Labels,
    send: (requestId: string | undefined) => Promise<Answer>,
    opts: { status?: number; given?: string | null } = {},
  ): Promise<void> {
    const own = `refusal-${process.pid}-${nextId++}`;
    const given = opts.given === undefined ? own : (opts.given ?? undefined);
    const before = await count(labels);
    const answer = await send(given);
    if (opts.status !== undefined) {
      assert.equal(answer.status, opts.status);
    }
    const requestId = answer.requestId;
    assert.ok(requestId !== undefined, "the answer has no x-request-id");
    if (given === own) {
      assert.equal(requestId, own, "the caller's acceptable id is echoed");
    } else {
      assert.match(requestId, UUID, "a new UUID when the caller's id is missing or unacceptable");
    }
    let after = await count(labels);
    for (let i = 0; i < 50 && after < before + 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await count(labels);
    }
    assert.equal(after, before + 1, `${seriesName(labels)} counted once`);
    const lines = linesOf(requestId);
    assert.equal(lines.length, 1, `one log line for ${requestId}: ${JSON.stringify(lines)}`);
    const [line] = lines;
    assert.equal(line?.method, labels.method);
    assert.equal(line?.protocol, labels.protocol);
    assert.equal(line?.code, CODE_NAMES[labels.code]);
    assert.equal(typeof line?.ms, "number");
    if (labels.code !== "ok") {
      assert.equal(typeof line?.message, "string");
      assert.notEqual(line?.message, "");
    }
  }

  const idHeader = (requestId: string | undefined): Record<string, string> =>
    requestId === undefined ? {} : { "x-request-id": requestId };

  function rest(
    path: string,
    init: { method?: string; contentType?: string; body?: string | Uint8Array } = {},
  ) {
    return async (requestId: string | undefined): Promise<Answer> => {
      const res = await fetch(`${service.publicUrl}${path}`, {
        method: init.method ?? "POST",
        headers: {
          ...(init.contentType === undefined ? {} : { "content-type": init.contentType }),
          ...idHeader(requestId),
        },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
      await res.arrayBuffer();
      return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
    };
  }

  function h2(
    baseUrl: () => string,
    path: string,
    contentType: string,
    body: Uint8Array,
    check?: (answer: H2Answer) => void,
  ) {
    return async (requestId: string | undefined): Promise<Answer> => {
      const answer = await h2Request(
        baseUrl(),
        { ":path": path, "content-type": contentType, ...idHeader(requestId) },
        body,
      );
      check?.(answer);
      return {
        status: Number(answer.headers[":status"]),
        requestId: header(answer.headers["x-request-id"]),
      };
    };
  }

  const malformed = envelope(Uint8Array.of(0xff, 0xff, 0xff));
  const invalid = (method: string, protocol: string): Labels => ({
    method,
    protocol,
    code: "invalid_argument",
  });

  describe("REST gateway refusals", () => {
    const path = "/user/tokens";
    it("a body that is not a JSON object", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "[1, 2]" }),
        { status: 400 },
      ));
    it("a field of the wrong JSON type", async () => {
      const body = json({ ...(await signedCreate(user)), timestamp: "soon", userId: 7 });
      await expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body }),
        { status: 400 },
      );
    });
    it("a missing required field", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "{}" }),
        { status: 400 },
      ));
    it("405", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "unimplemented" },
        rest(path, { method: "PUT", contentType: "application/json", body: "{}" }),
        { status: 405 },
      ));
    it("413", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: `"${"x".repeat(70_000)}"` }),
        { status: 413 },
      ));
    it("415", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "text/plain", body: "{}" }),
        { status: 415 },
      ));
    it("404, with a new UUID when the caller sends no id", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "not_found" },
        rest("/no/such/thing", { method: "GET" }),
        { status: 404, given: null },
      ));
    it("a refusal with an unacceptable x-request-id gets a new UUID", () =>
      expectObserved(
        invalid(CREATE, "rest"),
        rest(path, { contentType: "application/json", body: "{}" }),
        { status: 400, given: "not acceptable: spaces" },
      ));
  });

  describe("Connect's own refusals", () => {
    const path = `/${CREATE}`;
    it("an unsupported content type", () =>
      expectObserved(
        invalid(CREATE, "connect"),
        rest(path, { contentType: "text/plain", body: "{}" }),
        { status: 415 },
      ));
    it("a malformed binary message", () =>
      expectObserved(
        invalid(CREATE, "connect"),
        rest(path, { contentType: "application/proto", body: Uint8Array.of(0xff, 0xff, 0xff) }),
        { status: 400 },
      ));
    it("a wrong HTTP method", () =>
      expectObserved(
        { method: CREATE, protocol: "connect", code: "unimplemented" },
        rest(path, { method: "GET" }),
        { status: 405 },
      ));
    it("an HTTP/1.0 request without a Host header (once an uncaught exception)", async () => {
      await expectObserved(
        invalid(CREATE, "connect"),
        async (requestId) => {
          const text = await rawExchange(
            service.publicUrl,
            `POST ${path} HTTP/1.0\r\ncontent-type: application/json\r\n` +
              `x-request-id: ${requestId ?? ""}\r\ncontent-length: 2\r\n\r\n{}`,
            { end: true },
          );
          const status = /^HTTP\/1\.\d (\d{3})/.exec(text)?.[1];
          return {
            status: Number(status),
            requestId: /^x-request-id: (.*)\r$/im.exec(text)?.[1],
          };
        },
        { status: 400 },
      );
      assert.equal((await fetch(`${service.publicUrl}/healthz`)).status, 200);
    });
    it("an unknown method of a known service", () =>
      expectObserved(
        { method: "http", protocol: "rest", code: "not_found" },
        rest("/perps.token.v1.TokenService/NoSuchMethod", {
          contentType: "application/json",
          body: "{}",
        }),
        { status: 404 },
      ));
  });

  describe("gRPC and gRPC-Web refusals", () => {
    it("gRPC: a malformed message is INVALID_ARGUMENT, id in the headers", () =>
      expectObserved(
        invalid(CREATE, "grpc"),
        h2(
          () => service.publicUrl,
          `/${CREATE}`,
          "application/grpc",
          malformed,
          (answer) => assert.equal(answer.trailers["grpc-status"], "3"),
        ),
        { status: 200 },
      ));
    it("gRPC on the internal listener, with a new UUID", () =>
      expectObserved(
        invalid(CREATE, "grpc"),
        h2(() => service.internalUrl, `/${CREATE}`, "application/grpc+proto", malformed),
        { status: 200, given: null },
      ));
    it("gRPC-Web: a malformed message", () =>
      expectObserved(
        invalid(CREATE, "grpc-web"),
        h2(() => service.publicUrl, `/${CREATE}`, "application/grpc-web+proto", malformed),
        { status: 200 },
      ));
    it("gRPC: an unknown method on the public listener is UNIMPLEMENTED, id in the trailers", () =>
      expectObserved(
        { method: "http", protocol: "grpc", code: "unimplemented" },
        h2(
          () => service.publicUrl,
          "/perps.token.v1.TokenService/NoSuchMethod",
          "application/grpc",
          envelope(new Uint8Array()),
          (answer) => {
            assert.equal(answer.trailers["grpc-status"], "12");
            assert.equal(answer.trailers["x-request-id"], answer.headers["x-request-id"]);
          },
        ),
        { status: 200 },
      ));
    it("gRPC: an unknown method on the internal listener is UNIMPLEMENTED, id in the trailers", () =>
      expectObserved(
        { method: "http", protocol: "grpc", code: "unimplemented" },
        h2(
          () => service.internalUrl,
          "/perps.token.v1.UserKeyService/NoSuchMethod",
          "application/grpc",
          envelope(new Uint8Array()),
          (answer) => {
            assert.equal(answer.trailers["grpc-status"], "12");
            assert.equal(answer.trailers["x-request-id"], answer.headers["x-request-id"]);
          },
        ),
        { status: 200 },
      ));
  });

  describe("plain endpoints", () => {
    const plain = (code: string): Labels => ({ method: "http", protocol: "http", code });
    const get = (url: () => string) => async (requestId: string | undefined) => {
      const res = await fetch(url(), { headers: idHeader(requestId) });
      await res.arrayBuffer();
      return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
    };
    it("/healthz on the public listener", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.publicUrl}/healthz`),
        { status: 200 },
      ));
    it("/readyz on the internal listener", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.internalUrl}/readyz`),
        { status: 200 },
      ));
    it("/openapi.json", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.publicUrl}/openapi.json`),
        {
          status: 200,
        },
      ));
    it("/metrics", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.internalUrl}/metrics`),
        { status: 200 },
      ));
    for (const [name, url] of [
      ["/healthz", () => `${service.publicUrl}/healthz`],
      ["/readyz", () => `${service.internalUrl}/readyz`],
      ["/openapi.json", () => `${service.publicUrl}/openapi.json`],
      ["/metrics", () => `${service.internalUrl}/metrics`],
    ] as const) {
      it(`HEAD ${name}`, () =>
        expectObserved(
          plain("ok"),
          async (requestId) => {
            const res = await fetch(url(), { method: "HEAD", headers: idHeader(requestId) });
            return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
          },
          { status: 200 },
        ));
      it(`POST ${name}: 405`, () =>
        expectObserved(
          plain("unimplemented"),
          async (requestId) => {
            const res = await fetch(url(), {
              method: "POST",
              headers: idHeader(requestId),
              body: "{}",
            });
            await res.arrayBuffer();
            return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
          },
          { status: 405 },
        ));
    }
    it("an HTTP/1.1 request without Host: 400", () =>
      expectObserved(
        plain("invalid_argument"),
        async (requestId) => {
          const text = await rawExchange(
            service.publicUrl,
            `GET /healthz HTTP/1.1\r\nx-request-id: ${requestId ?? ""}\r\n\r\n`,
            { end: true },
          );
          return {
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
            requestId: /^x-request-id: (.*)\r$/im.exec(text)?.[1],
          };
        },
        { status: 400 },
      ));
    it("the internal listener's 404", () =>
      expectObserved(
        plain("not_found"),
        get(() => `${service.internalUrl}/nothing-here`),
        {
          status: 404,
        },
      ));
  });

  it("a request abandoned before the answer is counted as canceled, at most a debug line", async () => {
    const labels = { method: CREATE, protocol: "rest", code: "canceled" };
    const requestId = `abandoned-${process.pid}`;
    const before = await count(labels);
    const { hostname, port } = new URL(service.publicUrl);
    await new Promise<void>((resolve, reject) => {
      const socket = connectTcp(Number(port), hostname, () => {
        socket.write(
          `POST /user/tokens HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
            `x-request-id: ${requestId}\r\ncontent-length: 100\r\n\r\n{"userId":`,
          () => setTimeout(() => socket.destroy(), 50),
        );
      });
      socket.on("error", reject);
      socket.on("close", () => resolve());
    });
    let after = await count(labels);
    for (let i = 0; i < 50 && after < before + 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await count(labels);
    }
    assert.equal(after, before + 1);
    // At most a debug line (this suite logs at debug), never info or above.
    const lines = linesOf(requestId);
    assert.ok(lines.length <= 1, JSON.stringify(lines));
    for (const line of lines) {
      assert.equal(line.level, 20, JSON.stringify(line));
    }
  });

  describe("calls still log and count once", () => {
    it("a REST create", async () => {
      const body = json(await signedCreate(user));
      await expectObserved(
        { method: CREATE, protocol: "rest", code: "ok" },
        rest("/user/tokens", { contentType: "application/json", body }),
        { status: 201 },
      );
    });
    it("a gRPC create", async () => {
      const message = toBinary(
        CreateTokenRequestSchema,
        create(CreateTokenRequestSchema, await signedCreate(user)),
      );
      await expectObserved(
        { method: CREATE, protocol: "grpc", code: "ok" },
        h2(
          () => service.publicUrl,
          `/${CREATE}`,
          "application/grpc",
          envelope(message),
          (answer) => assert.equal(answer.trailers["grpc-status"], "0"),
        ),
        { status: 200 },
      );
    });
    it("a REST call refused by the service (not by the gateway)", async () => {
      const body = json(await signedCreate(user, { expiresIn: 0n }));
      await expectObserved(
        invalid(CREATE, "rest"),
        rest("/user/tokens", { contentType: "application/json", body }),
        { status: 400 },
      );
    });
  });
});
