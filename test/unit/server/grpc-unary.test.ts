import assert from "node:assert/strict";
import { connect, constants, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  createServiceImplSpec,
  type ServiceImpl,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../../src/gen/health/v1/health_pb.js";
import { createConnectHandler } from "../../../src/server/connect-handler.js";
import {
  createDualProtocolServer,
  type DualProtocolServer,
} from "../../../src/server/dual-protocol-server.js";
import { createGrpcUnary, singleMessage } from "../../../src/server/grpc-unary.js";

const protocols: string[] = [];
const timeouts: (number | undefined)[] = [];
let slowStarted: () => void = () => {};
let slowAborted: (reason: unknown) => void = () => {};
const impl: Partial<ServiceImpl<typeof Health>> = {
  check(req, ctx) {
    protocols.push(ctx.protocolName);
    timeouts.push(ctx.timeoutMs());
    if (req.service === "fail") {
      throw new ConnectError(
        "refused: ünïcode, 100% sure",
        Code.PermissionDenied,
        { "www-authenticate": 'Bearer realm="t"', "retry-after": "3" },
        [{ desc: HealthCheckRequestSchema, value: { service: "detail" } }],
      );
    }
    if (req.service === "slow") {
      const signal = ctx.signal;
      slowStarted();
      return new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          slowAborted(signal.reason);
          reject(signal.reason);
        });
      });
    }
    if (req.service === "boom") {
      throw new Error("not a ConnectError");
    }
    ctx.responseHeader.set("x-from-impl", "yes");
    return { status: HealthCheckResponse_ServingStatus.SERVING };
  },
};
const routes = (router: ConnectRouter) => router.service(Health, impl);
const checkPath = `/${Health.typeName}/Check`;

function envelope(payload: Uint8Array, flags = 0, length = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, payload]);
}

function checkRequest(service: string): Uint8Array {
  return toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service }));
}

interface H2Answer {
  headers: IncomingHttpHeaders;
  data: Buffer;
  trailers: IncomingHttpHeaders;
}

async function call(
  port: number,
  body: Buffer,
  extra: OutgoingHttpHeaders = {},
): Promise<H2Answer> {
  const session = connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise<H2Answer>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": checkPath,
        "content-type": "application/grpc",
        te: "trailers",
        ...extra,
      });
      let headers: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        headers = h;
      });
      stream.on("trailers", (t) => {
        trailers = t;
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve({ headers, data: Buffer.concat(chunks), trailers }));
      stream.on("error", reject);
      stream.end(body);
    });
  } finally {
    session.close();
  }
}

function comparable(h: IncomingHttpHeaders): Record<string, unknown> {
  const { date: _date, ...rest } = h;
  return { ...rest };
}

describe("lean gRPC unary path", () => {
  let lean: DualProtocolServer;
  let reference: DualProtocolServer;
  let direct: DualProtocolServer;
  const fellBack: Buffer[] = [];
  before(async () => {
    lean = createDualProtocolServer({
      host: "127.0.0.1",
      port: 0,
      handler: createConnectHandler({
        routes,
        interceptors: [],
        readMaxBytes: 64,
        fallback: (_req, res) => {
          res.writeHead(404);
          res.end();
        },
        contextValues: () => createContextValues(),
      }),
    });
    reference = createDualProtocolServer({
      host: "127.0.0.1",
      port: 0,
      handler: connectNodeAdapter({ routes, readMaxBytes: 64 }),
    });
    const grpcUnary = createGrpcUnary({
      services: [{ spec: createServiceImplSpec(Health, impl), readMaxBytes: 64 }],
      interceptors: [],
      contextValues: () => createContextValues(),
    });
    direct = createDualProtocolServer({
      host: "127.0.0.1",
      port: 0,
      handler: (req, res) => {
        const taken = grpcUnary.serve(Health.method.check, req, res, async (body) => {
          const chunks: Uint8Array[] = [];
          for await (const chunk of body ?? []) {
            chunks.push(chunk);
          }
          fellBack.push(Buffer.concat(chunks));
          res.writeHead(299);
          res.end();
        });
        if (!taken) {
          res.writeHead(298);
          res.end();
        }
      },
    });
    await Promise.all([lean.listen(), reference.listen(), direct.listen()]);
  });
  after(() => Promise.all([lean.close(100), reference.close(100), direct.close(100)]));

  it("finds exactly one uncompressed message within the limit", () => {
    const payload = Buffer.from([8, 1]);
    const whole = envelope(payload);
    assert.deepEqual(singleMessage([whole], whole.length, 64), payload);
    const split = [whole.subarray(0, 3), whole.subarray(3)];
    assert.deepEqual(singleMessage(split, whole.length, 64), payload);
    assert.equal(singleMessage([whole], whole.length, 1), undefined, "over the limit");
    const compressed = envelope(payload, 1);
    assert.equal(singleMessage([compressed], compressed.length, 64), undefined, "compressed");
    const two = Buffer.concat([whole, whole]);
    assert.equal(singleMessage([two], two.length, 64), undefined, "two messages");
    const short = envelope(payload, 0, 9);
    assert.equal(singleMessage([short], short.length, 64), undefined, "incomplete");
    assert.equal(singleMessage([Buffer.from([0, 0])], 2, 64), undefined, "no header");
  });

  it("answers a unary call itself, with protocol name grpc", async () => {
    protocols.length = 0;
    const fallbacks = fellBack.length;
    const answer = await call(direct.port, envelope(checkRequest("")));
    assert.equal(answer.headers[":status"], 200);
    assert.equal(answer.headers["content-type"], "application/grpc+proto");
    assert.equal(answer.headers["x-from-impl"], "yes");
    assert.equal(answer.trailers["grpc-status"], "0");
    assert.equal(answer.data.readUInt32BE(1), answer.data.length - 5);
    const message = fromBinary(HealthCheckResponseSchema, answer.data.subarray(5));
    assert.equal(message.status, HealthCheckResponse_ServingStatus.SERVING);
    assert.deepEqual(protocols, ["grpc"]);
    assert.equal(fellBack.length, fallbacks);
  });

  it("serves a call with a deadline, which the handler sees", async () => {
    timeouts.length = 0;
    const answer = await call(direct.port, envelope(checkRequest("")), { "grpc-timeout": "5S" });
    assert.equal(answer.headers[":status"], 200);
    assert.equal(answer.trailers["grpc-status"], "0");
    const [left] = timeouts;
    assert.ok(left !== undefined && left > 4000 && left <= 5000, `timeoutMs() ${left}`);
  });

  it("leaves bad deadlines, compression and gRPC-Web to Connect without reading the body", async () => {
    const body = envelope(checkRequest(""));
    for (const extra of [
      { "grpc-timeout": "1 second" },
      { "grpc-encoding": "gzip" },
      { "content-type": "application/grpc-web+proto" },
      { "content-type": "application/grpc+json" },
    ]) {
      const answer = await call(direct.port, body, extra);
      assert.equal(answer.headers[":status"], 298, JSON.stringify(extra));
    }
  });

  it("hands Connect every byte of a body it does not take", async () => {
    const good = envelope(checkRequest(""));
    for (const body of [
      envelope(checkRequest(""), 1),
      Buffer.concat([good, good]),
      envelope(Buffer.alloc(100, 1)),
      envelope(Buffer.from([0xff, 0xff, 0xff])),
      Buffer.from([0, 0]),
    ]) {
      fellBack.length = 0;
      const answer = await call(direct.port, body);
      assert.equal(answer.headers[":status"], 299);
      assert.deepEqual(fellBack, [body]);
    }
  });

  for (const [name, body] of [
    ["success", envelope(checkRequest(""))],
    ["a ConnectError with metadata and details", envelope(checkRequest("fail"))],
    ["an error that is not a ConnectError", envelope(checkRequest("boom"))],
    ["a malformed message", envelope(Buffer.from([0xff, 0xff, 0xff]))],
    ["a message over the limit", envelope(Buffer.alloc(100, 1))],
    ["two messages", Buffer.concat([envelope(checkRequest("")), envelope(checkRequest(""))])],
    ["a compressed message", envelope(checkRequest(""), 1)],
  ] as const) {
    it(`answers ${name} exactly as Connect's gRPC handler`, async () => {
      const [mine, theirs] = await Promise.all([call(lean.port, body), call(reference.port, body)]);
      assert.deepEqual(comparable(mine.headers), comparable(theirs.headers));
      assert.deepEqual(mine.data, theirs.data);
      assert.deepEqual(comparable(mine.trailers), comparable(theirs.trailers));
    });
  }

  for (const timeout of ["2S", "1 second"]) {
    it(`answers grpc-timeout ${timeout} exactly as Connect's gRPC handler`, async () => {
      const body = envelope(checkRequest(""));
      const extra = { "grpc-timeout": timeout };
      const [mine, theirs] = await Promise.all([
        call(lean.port, body, extra),
        call(reference.port, body, extra),
      ]);
      assert.deepEqual(comparable(mine.headers), comparable(theirs.headers));
      assert.deepEqual(mine.data, theirs.data);
      assert.deepEqual(comparable(mine.trailers), comparable(theirs.trailers));
    });
  }

  it("survives a client that resets the stream during the call, and aborts the call's signal", async () => {
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const aborted = new Promise<unknown>((resolve) => {
      slowAborted = resolve;
    });
    const session = connect(`http://127.0.0.1:${direct.port}`);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": checkPath,
        "content-type": "application/grpc",
      });
      stream.on("error", () => {});
      stream.end(envelope(checkRequest("slow")));
      await started;
      stream.close(constants.NGHTTP2_CANCEL);
      const reason = await aborted;
      assert.equal(ConnectError.from(reason).code, Code.Canceled);
    } finally {
      session.close();
    }
    const answer = await call(direct.port, envelope(checkRequest("")));
    assert.equal(answer.trailers["grpc-status"], "0");
  });
});
