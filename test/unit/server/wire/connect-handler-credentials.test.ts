import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type ServiceImpl,
} from "@connectrpc/connect";
import { operatorKey } from "../../../../src/admin-auth/call-gate.js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
} from "../../../../src/gen/health/v1/health_pb.js";
import {
  createDualProtocolServer,
  type DualProtocolServer,
} from "../../../../src/server/dual-protocol-server.js";
import { Exchange } from "../../../../src/server/exchange.js";
import { createConnectHandler } from "../../../../src/server/wire/connect-handler.js";
import { LISTENER_LIMITS } from "../../../support/store-settings.js";
import { type Answer, type Sent, send } from "../../../support/wire-exchange.js";

// Credentials are asked once, by the call gate, before the body is read: no
// interceptor asks them again. So no shape of request that reaches a unary
// method may get to the implementation without the gate's leave, whichever
// path serves it: the wire paths, or Connect's own handler for what they do not take.

const CHECK = `/${Health.typeName}/Check`;
const operators: string[] = [];
const impl: Partial<ServiceImpl<typeof Health>> = {
  check(_req, ctx) {
    operators.push(ctx.values.get(operatorKey));
    return { status: HealthCheckResponse_ServingStatus.SERVING };
  },
};
const message = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema));

function envelope(payload: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Every shape of a call of Check; `served` when a wire path takes it and it reaches the method. */
const SHAPES: readonly (Omit<Sent, "http2"> & { name: string; served: boolean })[] = [
  {
    name: "Connect, proto",
    served: true,
    headers: { "content-type": "application/proto" },
    body: message,
  },
  {
    name: "Connect, JSON",
    served: true,
    headers: { "content-type": "application/json" },
    body: "{}",
  },
  {
    name: "Connect, gzip",
    served: true,
    headers: { "content-type": "application/proto", "content-encoding": "gzip" },
    body: gzipSync(message),
  },
  {
    name: "Connect GET",
    served: false,
    method: "GET",
    path: `${CHECK}?connect=v1&encoding=json&message=%7B%7D`,
    headers: {},
    body: "",
  },
  {
    name: "Connect's streaming type",
    served: false,
    headers: { "content-type": "application/connect+proto" },
    body: envelope(message),
  },
  {
    name: "gRPC",
    served: true,
    headers: { "content-type": "application/grpc" },
    body: envelope(message),
  },
  {
    name: "gRPC, JSON",
    served: true,
    headers: { "content-type": "application/grpc+json" },
    body: envelope(Buffer.from("{}")),
  },
  {
    name: "gRPC, gzip",
    served: true,
    headers: { "content-type": "application/grpc", "grpc-encoding": "gzip" },
    body: envelope(gzipSync(message), 1),
  },
  {
    name: "gRPC-Web",
    served: true,
    headers: { "content-type": "application/grpc-web+proto" },
    body: envelope(message),
  },
  {
    name: "gRPC-Web-Text",
    served: false,
    headers: { "content-type": "application/grpc-web-text" },
    body: envelope(message).toString("base64"),
  },
  { name: "plain text", served: false, headers: { "content-type": "text/plain" }, body: "{}" },
  {
    name: "PUT",
    served: false,
    method: "PUT",
    headers: { "content-type": "application/proto" },
    body: message,
  },
];

/** Whether an answer refuses: an HTTP error, or a gRPC status other than OK (gRPC-Web's in its body). */
function refused(answer: Answer): boolean {
  const grpcStatus =
    answer.trailers["grpc-status"] ??
    answer.headers["grpc-status"] ??
    /grpc-status:\s*(\d+)/.exec(answer.body.toString("latin1"))?.[1];
  return answer.status >= 400 || (grpcStatus !== undefined && grpcStatus !== "0");
}

describe("a call's credentials, asked once before its body", () => {
  let server: DualProtocolServer;
  before(async () => {
    const handler = createConnectHandler({
      routes: (router: ConnectRouter) => router.service(Health, impl),
      interceptors: [],
      readMaxBytes: 1024,
      fallback: (_req, res) => {
        res.writeHead(404);
        res.end();
      },
      contextValues: () => createContextValues(),
      gate: (_service, headers) =>
        headers.authorization === "Bearer op"
          ? "alice"
          : new ConnectError("an operator's credential is needed", Code.Unauthenticated),
    });
    server = createDualProtocolServer({
      ...LISTENER_LIMITS,
      host: "127.0.0.1",
      port: 0,
      handler: handler.handle,
      // The common gRPC call over HTTP/2 is served off the raw stream: a way in of its own.
      streamHandler: (stream, headers) =>
        handler.takeStream(
          stream,
          headers,
          () => new Exchange("", performance.now()),
          () => createContextValues(),
        ),
    });
    await server.listen();
  });
  after(() => server.close(100));

  for (const http2 of [false, true]) {
    it(`no shape of call reaches the method without the gate's leave (HTTP/${http2 ? 2 : 1.1})`, async () => {
      for (const shape of SHAPES) {
        operators.length = 0;
        const answer = await send(server.port, { path: CHECK, ...shape, http2 });
        assert.deepEqual(operators, [], shape.name);
        assert.ok(refused(answer), `${shape.name}: ${answer.status}`);
      }
    });

    it(`a call the gate lets in carries its operator to the method (HTTP/${http2 ? 2 : 1.1})`, async () => {
      for (const shape of SHAPES.filter((s) => s.served)) {
        operators.length = 0;
        await send(server.port, {
          path: CHECK,
          ...shape,
          headers: { ...shape.headers, authorization: "Bearer op" },
          http2,
        });
        assert.deepEqual(operators, ["alice"], shape.name);
      }
    });
  }
});
