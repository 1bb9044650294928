import assert from "node:assert/strict";
import { request as http1Request } from "node:http";
import { connect, constants } from "node:http2";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
} from "../../../../src/gen/health/v1/health_pb.js";
import type { DualProtocolServer } from "../../../../src/server/dual-protocol-server.js";
import { attachExchange, Exchange } from "../../../../src/server/exchange.js";
import { grpcStatusOf } from "../../../support/grpc-status-call.js";
import { listeningServer, wireHandler } from "../../../support/wire-test-server.js";

// What the wire paths give a call besides its answer (connect-handler-parity.test.ts holds the answers to
// Connect's): the protocol name and deadline the handler sees, the call's signal when the client
// goes, and what the exchange is told of a refusal made before the call.
const seen: { protocol: string; timeoutMs: number | undefined }[] = [];
let slowStarted: () => void = () => {};
let slowAborted: (reason: unknown) => void = () => {};
const impl: Partial<ServiceImpl<typeof Health>> = {
  check(req, ctx) {
    seen.push({ protocol: ctx.protocolName, timeoutMs: ctx.timeoutMs() });
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
    return { status: HealthCheckResponse_ServingStatus.SERVING };
  },
};
const routes = (router: ConnectRouter) => router.service(Health, impl);
const CHECK = `/${Health.typeName}/Check`;

function checkRequest(service: string): Uint8Array {
  return toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service }));
}

function envelope(payload: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** A gRPC call of Check over HTTP/2; resolves with its grpc-status. */
function grpcCall(port: number, body: Buffer, extra: Record<string, string> = {}) {
  return grpcStatusOf(`http://127.0.0.1:${port}`, CHECK, body, extra);
}

/** A Connect call over HTTP/1.1; resolves with its status. */
function connectCall(port: number, body: Uint8Array, extra: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const req = http1Request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: CHECK,
        headers: { "content-type": "application/proto", ...extra },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("a unary call on the wire paths", () => {
  let server: DualProtocolServer;
  const exchanges: Exchange[] = [];
  before(async () => {
    const handler = wireHandler(routes, 64);
    server = await listeningServer((req, res) => {
      const exchange = new Exchange("id", performance.now());
      exchanges.push(exchange);
      attachExchange(req, exchange);
      handler.handle(req, res);
    });
  });
  after(() => server.close(100));

  it("is served with its protocol's name, and the deadline it was given", async () => {
    seen.length = 0;
    assert.equal(
      await grpcCall(server.port, envelope(checkRequest("")), { "grpc-timeout": "5S" }),
      "0",
    );
    assert.equal(
      await connectCall(server.port, checkRequest(""), { "connect-timeout-ms": "5000" }),
      200,
    );
    const gRPCWeb = await new Promise<number>((resolve) => {
      const req = http1Request(
        {
          host: "127.0.0.1",
          port: server.port,
          method: "POST",
          path: CHECK,
          headers: { "content-type": "application/grpc-web+proto" },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.end(envelope(checkRequest("")));
    });
    assert.equal(gRPCWeb, 200);
    assert.deepEqual(
      seen.map((s) => s.protocol),
      ["grpc", "connect", "grpc-web"],
    );
    for (const { timeoutMs } of seen.slice(0, 2)) {
      assert.ok(timeoutMs !== undefined && timeoutMs > 4000 && timeoutMs <= 5000, `${timeoutMs}`);
    }
    assert.equal(seen[2]?.timeoutMs, undefined, "no deadline, none seen");
  });

  it("tells the exchange the RPC, protocol, code and words of a refusal made before the call", async () => {
    exchanges.length = 0;
    assert.equal(await grpcCall(server.port, envelope(Uint8Array.of(0xff, 0xff))), "3");
    assert.equal(await grpcCall(server.port, envelope(Buffer.alloc(100, 1))), "8");
    assert.equal(
      await grpcCall(server.port, envelope(checkRequest("")), { "grpc-timeout": "x" }),
      "3",
    );
    assert.equal(await connectCall(server.port, Uint8Array.of(0xff)), 400);
    assert.equal(
      await connectCall(server.port, checkRequest(""), { "content-encoding": "zstd" }),
      501,
    );
    const shouted = { "content-type": "Application/GRPC" };
    assert.equal(await grpcCall(server.port, envelope(Uint8Array.of(0xff)), shouted), "3");
    assert.deepEqual(
      exchanges.map((e) => [e.method, e.protocol, e.code]),
      [
        [`${Health.typeName}/Check`, "grpc", Code.InvalidArgument],
        [`${Health.typeName}/Check`, "grpc", Code.ResourceExhausted],
        [`${Health.typeName}/Check`, "grpc", Code.InvalidArgument],
        [`${Health.typeName}/Check`, "connect", Code.InvalidArgument],
        [`${Health.typeName}/Check`, "connect", Code.Unimplemented],
        [`${Health.typeName}/Check`, "grpc", Code.InvalidArgument],
      ],
    );
    assert.match(exchanges[0]?.message ?? "", /^parse binary: /);
    assert.match(exchanges[2]?.message ?? "", /invalid grpc timeout value: x/);
  });

  it("makes no call of a body cut short by a reset (HTTP/2 ends the body of a reset stream too)", async () => {
    seen.length = 0;
    for (const contentType of ["application/proto", "application/json", "application/grpc"]) {
      const session = connect(`http://127.0.0.1:${server.port}`);
      try {
        const stream = session.request({
          ":method": "POST",
          ":path": CHECK,
          "content-type": contentType,
          "content-length": "40",
        });
        const closed = new Promise<void>((resolve) => stream.on("close", resolve));
        stream.on("error", () => {});
        stream.resume();
        // Nothing, or the start of a message, then the client gives up.
        stream.write(contentType === "application/json" ? "{}" : Buffer.alloc(0));
        await new Promise((resolve) => setTimeout(resolve, 20));
        stream.close(constants.NGHTTP2_CANCEL);
        await closed;
      } finally {
        session.close();
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(seen, [], "no call was made of an incomplete body");
    assert.equal(await grpcCall(server.port, envelope(checkRequest(""))), "0");
  });

  it("survives a client that resets the stream during the call, and aborts the call's signal", async () => {
    const started = new Promise<void>((resolve) => {
      slowStarted = resolve;
    });
    const aborted = new Promise<unknown>((resolve) => {
      slowAborted = resolve;
    });
    const session = connect(`http://127.0.0.1:${server.port}`);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": CHECK,
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
    assert.equal(await grpcCall(server.port, envelope(checkRequest(""))), "0");
  });
});
