import assert from "node:assert/strict";
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
} from "../../../../src/gen/health/v1/health_pb.js";
import { inputError, streamInputInterceptor } from "../../../../src/server/wire/input-error.js";
import { send2 } from "../../../support/wire-exchange.js";

/** What Connect's own serialization throws for bytes that are not a Check request. */
function connectParseError(bytes: Uint8Array): ConnectError {
  const parse = createMethodSerializationLookup(Health.method.check, undefined, undefined, {
    readMaxBytes: 1024,
    writeMaxBytes: 1024,
  }).getI(true);
  try {
    parse.parse(bytes);
  } catch (err) {
    if (err instanceof ConnectError) {
      return err;
    }
  }
  assert.fail("Connect parsed it");
}

describe("the error of a request message that cannot be read", () => {
  it("a message that is not valid protobuf: INVALID_ARGUMENT, where Connect says INTERNAL, in its words", () => {
    const connects = connectParseError(Uint8Array.of(0xff, 0xff));
    assert.equal(connects.code, Code.Internal);
    const error = inputError(connects);
    assert.equal(error.code, Code.InvalidArgument);
    assert.equal(error.rawMessage, connects.rawMessage);
    assert.match(error.rawMessage, /^parse binary: /);
    assert.equal(error.cause, connects);
  });

  it("keeps the metadata and details of the error it rewords", () => {
    const connects = new ConnectError(
      "protocol error: received compressed envelope, but do not know how to decompress",
      Code.Internal,
      { "x-why": "no grpc-encoding" },
      [{ desc: HealthCheckRequestSchema, value: { service: "detail" } }],
    );
    const error = inputError(connects);
    assert.equal(error.code, Code.InvalidArgument);
    assert.equal(error.metadata.get("x-why"), "no grpc-encoding");
    assert.equal(error.details.length, 1);
  });

  it("keeps every other code as Connect gives it", () => {
    for (const code of [Code.ResourceExhausted, Code.InvalidArgument, Code.Unimplemented]) {
      const given = new ConnectError("as given", code);
      assert.equal(inputError(given), given);
    }
  });
});

describe("the stream input interceptor, on a streaming method Connect serves", () => {
  const watch = (router: ConnectRouter) =>
    router.service(Health, {
      async *watch() {
        yield { status: HealthCheckResponse_ServingStatus.SERVING };
      },
    });
  const servers: Http2Server[] = [];
  const ports = { with: 0, without: 0 };

  /** An HTTP/2 server of Connect's own handler with these interceptors; its port. */
  async function serve(interceptors: Interceptor[]): Promise<number> {
    const server = createServer(connectNodeAdapter({ routes: watch, interceptors }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  before(async () => {
    ports.with = await serve([streamInputInterceptor]);
    ports.without = await serve([]);
  });
  after(() =>
    Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))),
  );

  /** A gRPC Watch call sending `message` in one envelope: its trailers. */
  async function watched(port: number, message: Uint8Array) {
    const head = Buffer.alloc(5);
    head.writeUInt32BE(message.length, 1);
    const answer = await send2(port, {
      http2: true,
      path: `/${Health.typeName}/Watch`,
      headers: { "content-type": "application/grpc" },
      body: Buffer.concat([head, message]),
    });
    return answer.trailers;
  }

  it("answers a malformed message INVALID_ARGUMENT in Connect's words, where Connect says INTERNAL", async () => {
    const malformed = Uint8Array.of(0xff, 0xff);
    const mine = await watched(ports.with, malformed);
    const connects = await watched(ports.without, malformed);
    assert.equal(connects["grpc-status"], String(Code.Internal));
    assert.equal(mine["grpc-status"], String(Code.InvalidArgument));
    assert.equal(mine["grpc-message"], connects["grpc-message"]);
  });

  it("leaves a valid call alone", async () => {
    const valid = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, {}));
    assert.equal((await watched(ports.with, valid))["grpc-status"], "0");
  });
});
