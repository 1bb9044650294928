import assert from "node:assert/strict";
import { connect as http2Connect } from "node:http2";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type ServiceImpl,
} from "@connectrpc/connect";
import { trailerParse } from "@connectrpc/connect/protocol-grpc-web";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import {
  CreateTokenRequestSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
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
import { envelopePrefix, type HeldAnswer, holdStream } from "../../../support/held-stream.js";
import { LISTENER_LIMITS } from "../../../support/store-settings.js";
import { type Answer, CREATE, type Sent, send } from "../../../support/wire-exchange.js";
import { wireHandler } from "../../../support/wire-test-server.js";

/**
 * The wire paths (src/server/wire/) against Connect's own handler
 * (`connectNodeAdapter`), request by request: the same services, limits and
 * compressions on both, the same bytes sent, and the same status, headers
 * (all but `date`), body and trailers required back. The one difference
 * meant is a malformed message: INVALID_ARGUMENT here, INTERNAL from Connect
 * (checked as such, so that an upstream fix shows up here).
 */

const READ_MAX_BYTES = 64;

// The test's implementation: what it does is named by the request's signature.
const impl: Partial<ServiceImpl<typeof TokenService>> = {
  createToken(req, ctx) {
    switch (req.signature) {
      case "fail":
        throw new ConnectError(
          "refused: ünïcode, 100% sure",
          Code.PermissionDenied,
          { "www-authenticate": 'Bearer realm="t"', "retry-after": "3" },
          [{ desc: HealthCheckRequestSchema, value: { service: "detail" } }],
        );
      case "boom":
        throw new Error("not a ConnectError");
      case "big":
        // Over Connect's compressMinBytes (1 KiB): the answer is compressed where accepted.
        return { token: "t".repeat(4000), id: "big", expiresAt: "" };
      default:
        ctx.responseHeader.set("x-from-impl", "yes");
        ctx.responseTrailer.set("x-trailer-from-impl", "also");
        return { token: `token for ${req.signature}`, id: "1", expiresAt: "2026-12-01T00:00:00Z" };
    }
  },
  deleteToken: () => ({}),
};
// A streaming method, which Connect's own handler serves: one answer, then the end.
const health: Partial<ServiceImpl<typeof Health>> = {
  async *watch() {
    yield { status: HealthCheckResponse_ServingStatus.SERVING };
  },
};
const routes = (router: ConnectRouter) =>
  router.service(TokenService, impl).service(Health, health);
const WATCH = `/${Health.typeName}/Watch`;

function createRequest(signature: string): Uint8Array {
  return toBinary(CreateTokenRequestSchema, create(CreateTokenRequestSchema, { signature }));
}

function createJson(signature: string): string {
  return toJsonString(CreateTokenRequestSchema, create(CreateTokenRequestSchema, { signature }));
}

function envelope(payload: Uint8Array, flags = 0, length = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, payload]);
}

/** A request in each protocol and codec; `http2` for gRPC always. */
interface Protocol {
  readonly name: string;
  readonly http2: boolean;
  readonly contentType: string;
  /** The request body carrying `signature`. */
  readonly body: (signature: string) => Uint8Array | string;
  /** The request body carrying these message bytes (binary codecs only). */
  readonly raw?: (bytes: Uint8Array) => Uint8Array;
}

const PROTOCOLS: readonly Protocol[] = [
  {
    name: "Connect proto, HTTP/1.1",
    http2: false,
    contentType: "application/proto",
    body: createRequest,
    raw: (bytes) => bytes,
  },
  {
    name: "Connect proto, HTTP/2",
    http2: true,
    contentType: "application/proto",
    body: createRequest,
    raw: (bytes) => bytes,
  },
  {
    name: "Connect JSON, HTTP/1.1",
    http2: false,
    contentType: "application/json",
    body: createJson,
  },
  {
    name: "gRPC",
    http2: true,
    contentType: "application/grpc",
    body: (s) => envelope(createRequest(s)),
    raw: (bytes) => envelope(bytes),
  },
  {
    name: "gRPC JSON",
    http2: true,
    contentType: "application/grpc+json",
    body: (s) => envelope(Buffer.from(createJson(s))),
  },
  {
    name: "gRPC-Web, HTTP/1.1",
    http2: false,
    contentType: "application/grpc-web+proto",
    body: (s) => envelope(createRequest(s)),
    raw: (bytes) => envelope(bytes),
  },
  {
    name: "gRPC-Web, HTTP/2",
    http2: true,
    contentType: "application/grpc-web",
    body: (s) => envelope(createRequest(s)),
    raw: (bytes) => envelope(bytes),
  },
  {
    name: "gRPC-Web JSON",
    http2: false,
    contentType: "application/grpc-web+json",
    body: (s) => envelope(Buffer.from(createJson(s))),
  },
];

function isGrpc(protocol: Protocol): boolean {
  return protocol.contentType.startsWith("application/grpc");
}

/** The request of `protocol` with these extra headers. */
function sent(protocol: Protocol, body: Uint8Array | string, headers: Record<string, string> = {}) {
  return {
    http2: protocol.http2,
    headers: { "content-type": protocol.contentType, ...headers },
    body,
  };
}

/** The code an answer carries, wherever its protocol puts it. */
function codeOf(answer: Answer): string {
  const grpcStatus = answer.trailers["grpc-status"] ?? answer.headers["grpc-status"];
  if (typeof grpcStatus === "string") {
    return grpcStatus;
  }
  if (String(answer.headers["content-type"]).startsWith("application/grpc-web")) {
    const trailer = trailerParse(answer.body.subarray(5));
    return trailer.get("grpc-status") ?? "";
  }
  return (JSON.parse(answer.body.toString()) as { code: string }).code;
}

describe("the wire paths answer as Connect's own handler", () => {
  let ours: DualProtocolServer;
  let theirs: DualProtocolServer;
  before(async () => {
    const connect = wireHandler(routes, READ_MAX_BYTES);
    ours = createDualProtocolServer({
      ...LISTENER_LIMITS,
      host: "127.0.0.1",
      port: 0,
      handler: connect.handle,
      // The common gRPC unary call is served off the raw HTTP/2 stream: compared here too.
      streamHandler: (stream, headers) =>
        connect.takeStream(
          stream,
          headers,
          () => new Exchange("", performance.now()),
          () => createContextValues(),
        ),
    });
    theirs = createDualProtocolServer({
      ...LISTENER_LIMITS,
      host: "127.0.0.1",
      port: 0,
      handler: connectNodeAdapter({
        routes,
        readMaxBytes: READ_MAX_BYTES,
        acceptCompression: [compressionGzip, compressionBrotli],
      }),
    });
    await Promise.all([ours.listen(), theirs.listen()]);
  });
  after(() => Promise.all([ours.close(100), theirs.close(100)]));

  async function both(request: Sent): Promise<[Answer, Answer]> {
    return Promise.all([send(ours.port, request), send(theirs.port, request)]);
  }

  async function same(request: Sent): Promise<Answer> {
    const [mine, connects] = await both(request);
    assert.deepEqual(mine, connects);
    return mine;
  }

  for (const protocol of PROTOCOLS) {
    describe(protocol.name, () => {
      it("a valid call, with the implementation's headers and trailers", async () => {
        const answer = await same(sent(protocol, protocol.body("ok")));
        assert.equal(answer.status, 200);
        assert.equal(answer.headers["x-from-impl"], "yes");
      });

      it("an error with metadata and details", async () => {
        const answer = await same(sent(protocol, protocol.body("fail")));
        assert.equal(codeOf(answer), isGrpc(protocol) ? "7" : "permission_denied");
      });

      it("an error that is not a ConnectError", async () => {
        const answer = await same(sent(protocol, protocol.body("boom")));
        assert.equal(codeOf(answer), isGrpc(protocol) ? "13" : "internal");
      });

      it("a message over the read limit", async () => {
        const answer = await same(sent(protocol, protocol.body("x".repeat(READ_MAX_BYTES))));
        assert.equal(codeOf(answer), isGrpc(protocol) ? "8" : "resource_exhausted");
      });

      it("a gzip-compressed request", async () => {
        const body = protocol.body("zipped");
        const zipped = isGrpc(protocol)
          ? envelope(gzipSync(Buffer.from(body).subarray(5)), 1)
          : gzipSync(body);
        const encoding = isGrpc(protocol) ? "grpc-encoding" : "content-encoding";
        const answer = await same(sent(protocol, zipped, { [encoding]: "gzip" }));
        assert.equal(answer.status, 200);
        assert.ok(answer.body.includes("token for zipped"), "the call was made");
      });

      it("a compressed answer, when the client accepts one and the answer is large", async () => {
        const accept = isGrpc(protocol) ? "grpc-accept-encoding" : "accept-encoding";
        const answer = await same(sent(protocol, protocol.body("big"), { [accept]: "br, gzip" }));
        assert.equal(answer.status, 200);
        assert.ok(answer.body.length < 4000, `${answer.body.length} bytes: not compressed`);
      });

      it("an unknown encoding", async () => {
        const encoding = isGrpc(protocol) ? "grpc-encoding" : "content-encoding";
        const answer = await same(sent(protocol, protocol.body("ok"), { [encoding]: "snappy" }));
        assert.equal(codeOf(answer), isGrpc(protocol) ? "12" : "unimplemented");
      });

      it("a timeout that cannot be read, and one that can", async () => {
        const header = isGrpc(protocol) ? "grpc-timeout" : "connect-timeout-ms";
        const bad = await same(sent(protocol, protocol.body("ok"), { [header]: "1 second" }));
        assert.equal(codeOf(bad), isGrpc(protocol) ? "3" : "invalid_argument");
        const good = await same(
          sent(protocol, protocol.body("ok"), { [header]: isGrpc(protocol) ? "5S" : "5000" }),
        );
        assert.equal(good.status, 200);
      });

      it("a wrong content type (415) and a wrong HTTP method (405)", async () => {
        const wrongType = await same(
          sent(protocol, protocol.body("ok"), { "content-type": "text/plain" }),
        );
        assert.equal(wrongType.status, 415);
        const wrongMethod = await same({ ...sent(protocol, ""), method: "PUT" });
        assert.equal(wrongMethod.status, 405);
      });

      const raw = protocol.raw;
      if (raw !== undefined) {
        it("a malformed message: INVALID_ARGUMENT, where Connect says INTERNAL", async () => {
          for (const bytes of [[0xff], [0x0a], [0x07], [0x0a, 0x01, 0xff], [0xff, 0xff, 0xff]]) {
            const [mine, connects] = await both(sent(protocol, raw(Uint8Array.from(bytes))));
            const message = `bytes ${bytes.join(",")}`;
            assert.equal(codeOf(connects), isGrpc(protocol) ? "13" : "internal", message);
            assert.equal(codeOf(mine), isGrpc(protocol) ? "3" : "invalid_argument", message);
            assert.equal(mine.status, isGrpc(protocol) ? 200 : 400, message);
            if (!isGrpc(protocol)) {
              const mineJson = JSON.parse(mine.body.toString()) as { message: string };
              const theirJson = JSON.parse(connects.body.toString()) as { message: string };
              assert.match(mineJson.message, /^parse binary: /);
              assert.equal(mineJson.message, theirJson.message);
            } else if (protocol.contentType.startsWith("application/grpc-web")) {
              assert.equal(mine.body.subarray(0, 1)[0], 0x80, "a trailer envelope");
            } else {
              assert.equal(mine.trailers["grpc-message"], connects.trailers["grpc-message"]);
            }
          }
        });
      }

      if (isGrpc(protocol)) {
        it("no message, and two messages", async () => {
          const none = await same(sent(protocol, new Uint8Array()));
          assert.equal(codeOf(none), "12");
          const one = Buffer.from(protocol.body("ok"));
          const two = await same(sent(protocol, Buffer.concat([one, one])));
          assert.equal(codeOf(two), "12");
        });

        it("a compressed envelope without an encoding, and an envelope cut short", async () => {
          const payload = createRequest("ok");
          const [mine, connects] = await both(sent(protocol, envelope(payload, 1)));
          assert.equal(codeOf(connects), "13");
          assert.equal(codeOf(mine), "3", "the caller's bytes: INVALID_ARGUMENT");
          await same(sent(protocol, envelope(payload, 0, payload.length + 10)));
        });
      }
    });
  }

  describe("content types in any case (media types are case-insensitive)", () => {
    for (const [contentType, http2] of [
      ["Application/GRPC", true],
      ["APPLICATION/GRPC-WEB+PROTO", false],
      ["Application/Proto", false],
    ] as const) {
      const grpc = contentType.toLowerCase().startsWith("application/grpc");
      const frame = (bytes: Uint8Array) => (grpc ? envelope(bytes) : bytes);
      const request = (bytes: Uint8Array): Sent => ({
        http2,
        headers: { "content-type": contentType },
        body: frame(bytes),
      });

      it(`${contentType}: a valid call, and a malformed message INVALID_ARGUMENT`, async () => {
        const valid = await same(request(createRequest("ok")));
        assert.equal(valid.status, 200);
        const [mine, connects] = await both(request(Uint8Array.of(0xff, 0xff)));
        assert.equal(codeOf(connects), grpc ? "13" : "internal");
        assert.equal(codeOf(mine), grpc ? "3" : "invalid_argument");
      });
    }
  });

  describe("a streaming method (health Watch), served by Connect's own handler", () => {
    const watch = (body: Uint8Array, headers: Record<string, string> = {}): Sent => ({
      http2: true,
      path: WATCH,
      headers: { "content-type": "application/grpc", ...headers },
      body,
    });
    const request = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, {}));

    it("a valid call", async () => {
      const answer = await same(watch(envelope(request)));
      assert.equal(codeOf(answer), "0");
    });

    it("a bad grpc-timeout and an unknown grpc-encoding, refused before the call", async () => {
      assert.equal(codeOf(await same(watch(envelope(request), { "grpc-timeout": "soon" }))), "3");
      assert.equal(codeOf(await same(watch(envelope(request), { "grpc-encoding": "lz4" }))), "12");
    });

    it("a malformed message: INVALID_ARGUMENT, where Connect says INTERNAL", async () => {
      const [mine, connects] = await both(watch(envelope(Uint8Array.of(0xff, 0xff))));
      assert.equal(codeOf(connects), "13");
      assert.equal(codeOf(mine), "3");
      assert.equal(mine.trailers["grpc-message"], connects.trailers["grpc-message"]);
    });
  });

  it("a grpc-timeout passed while the body arrives: DEADLINE_EXCEEDED, where Connect makes the call", async () => {
    const message = Buffer.from(createRequest("ok"));
    const late = async (port: number, contentType: string): Promise<HeldAnswer> => {
      const session = http2Connect(`http://127.0.0.1:${port}`);
      try {
        const held = holdStream(session, CREATE, {
          "content-type": contentType,
          "grpc-timeout": "100m",
        });
        held.stream.write(Buffer.concat([envelopePrefix(message.length), message.subarray(0, 2)]));
        await new Promise((resolve) => setTimeout(resolve, 300));
        held.stream.end(message.subarray(2));
        return await held.closed;
      } finally {
        session.destroy();
      }
    };
    // Both gRPC paths: the raw stream (application/grpc) and node's compatibility objects.
    for (const contentType of ["application/grpc", "Application/GRPC"]) {
      const connects = await late(theirs.port, contentType);
      assert.equal(connects.trailers["grpc-status"], "0", "Connect still makes the call");
      const mine = await late(ours.port, contentType);
      assert.equal(mine.trailers["grpc-status"], "4", contentType);
    }
  });

  it("an unknown method of a known service goes to the fallback (Connect protocol)", async () => {
    const [mine, connects] = await both({
      http2: false,
      path: `/${TokenService.typeName}/NoSuchMethod`,
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(mine.status, 404);
    assert.equal(connects.status, 404);
  });

  it("an unknown gRPC method is UNIMPLEMENTED in the trailers (Connect: a 404, which gRPC clients read as UNIMPLEMENTED)", async () => {
    const request = {
      http2: true,
      path: `/${TokenService.typeName}/NoSuchMethod`,
      headers: { "content-type": "application/grpc" },
      body: envelope(new Uint8Array()),
    };
    const [mine, connects] = await both(request);
    assert.equal(connects.status, 404);
    assert.equal(mine.status, 200);
    assert.equal(mine.trailers["grpc-status"], "12");
    assert.equal(
      mine.trailers["grpc-message"],
      encodeURIComponent(`unknown method NoSuchMethod for service ${TokenService.typeName}`),
    );
  });
});
