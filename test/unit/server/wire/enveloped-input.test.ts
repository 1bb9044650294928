import assert from "node:assert/strict";
import { createServer as createHttp1Server, type IncomingHttpHeaders } from "node:http";
import { createServer as createHttp2Server } from "node:http2";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { create, type DescMethod, isMessage, toBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { trailerFlag } from "@connectrpc/connect/protocol-grpc-web";
import { compressionGzip } from "@connectrpc/connect-node";
import { Health, HealthCheckRequestSchema } from "../../../../src/gen/health/v1/health_pb.js";
import { type BodySource, readRequestBody } from "../../../../src/http/request-body.js";
import { readEnvelopedInput, singleMessage } from "../../../../src/server/wire/enveloped-input.js";
import {
  announcedEnvelope,
  ENVELOPE_HEAD_BYTES,
} from "../../../../src/server/wire/unary-method.js";
import { serverPool } from "../../../support/server-pool.js";
import { type Sent, send } from "../../../support/wire-exchange.js";

const READ_MAX_BYTES = 64;
// Typed as the wire paths hold it: any method's messages.
const checkMethod: DescMethod = Health.method.check;
const parse = createMethodSerializationLookup(checkMethod, undefined, undefined, {
  readMaxBytes: READ_MAX_BYTES,
  writeMaxBytes: READ_MAX_BYTES,
}).getI(true);

/** What a server made of a request's body: the message's `service` (and whether at once), or the error. */
interface Read {
  readonly service?: string;
  readonly atOnce?: boolean;
  readonly code?: number;
  readonly message?: string;
}

/** Reads a unary gRPC (or, by its content type, gRPC-Web) request as the wire paths do. */
async function read(source: BodySource, headers: IncomingHttpHeaders): Promise<Read> {
  const body = await readRequestBody(
    source,
    READ_MAX_BYTES + ENVELOPE_HEAD_BYTES,
    announcedEnvelope(READ_MAX_BYTES),
  );
  try {
    const input = readEnvelopedInput(body, source, {
      parse,
      readMaxBytes: READ_MAX_BYTES,
      compression: headers["grpc-encoding"] === "gzip" ? compressionGzip : null,
      endFlag: String(headers["content-type"]).startsWith("application/grpc-web")
        ? trailerFlag
        : undefined,
    });
    const message = input instanceof Promise ? await input : input;
    assert.ok(isMessage(message, HealthCheckRequestSchema));
    return { service: message.service, atOnce: !(input instanceof Promise) };
  } catch (err) {
    assert.ok(err instanceof ConnectError, String(err));
    return { code: err.code, message: err.rawMessage };
  }
}

function envelope(payload: Uint8Array, flags = 0, length = payload.length): Buffer {
  const head = Buffer.alloc(ENVELOPE_HEAD_BYTES);
  head[0] = flags;
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, payload]);
}

const request = (service: string) =>
  toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service }));

describe("the enveloped input of a unary gRPC or gRPC-Web request", () => {
  const pool = serverPool();
  // Each source of a body the wire paths read: node's HTTP/1.1 request, its HTTP/2 request, a raw HTTP/2 stream.
  const ports = { http1: 0, http2: 0, stream: 0 };

  before(async () => {
    ports.http1 = await pool.listen(
      createHttp1Server((req, res) => {
        void read(req, req.headers).then((r) => res.end(JSON.stringify(r)));
      }),
    );
    ports.http2 = await pool.listen(
      createHttp2Server((req, res) => {
        void read(req, req.headers).then((r) => res.end(JSON.stringify(r)));
      }),
    );
    const raw = createHttp2Server();
    raw.on("stream", (stream, headers) => {
      void read(stream, headers).then((r) => {
        stream.respond({ ":status": 200 });
        stream.end(JSON.stringify(r));
      });
    });
    ports.stream = await pool.listen(raw);
  });
  after(() => pool.closeAll());

  /** What each of the three sources made of these bytes: the same, checked, and returned. */
  async function readEverywhere(body: Uint8Array, headers: Record<string, string> = {}) {
    const sent = (http2: boolean): Sent => ({
      http2,
      path: "/read",
      headers: { "content-type": "application/grpc", ...headers },
      body,
    });
    const answers = await Promise.all([
      send(ports.http1, sent(false)),
      send(ports.http2, sent(true)),
      send(ports.stream, sent(true)),
    ]);
    const [first, ...others] = answers.map((a) => JSON.parse(a.body.toString()) as Read);
    for (const other of others) {
      assert.deepEqual(other, first);
    }
    return first;
  }

  it("one uncompressed envelope within the limit: decoded at once", async () => {
    assert.deepEqual(await readEverywhere(envelope(request("svc"))), {
      service: "svc",
      atOnce: true,
    });
  });

  it("a malformed message: INVALID_ARGUMENT in Connect's words", async () => {
    const r = await readEverywhere(envelope(Uint8Array.of(0xff, 0xff)));
    assert.equal(r?.code, 3);
    assert.match(r?.message ?? "", /^parse binary: /);
  });

  it("a compressed envelope: decompressed as negotiated", async () => {
    const zipped = envelope(gzipSync(request("zipped")), 1);
    assert.deepEqual(await readEverywhere(zipped, { "grpc-encoding": "gzip" }), {
      service: "zipped",
      atOnce: false,
    });
  });

  it("a compressed envelope without an encoding: INVALID_ARGUMENT, where Connect says INTERNAL", async () => {
    const r = await readEverywhere(envelope(gzipSync(request("zipped")), 1));
    assert.equal(r?.code, 3);
    assert.match(r?.message ?? "", /compressed/);
  });

  it("no message, or two: UNIMPLEMENTED, as Connect refuses them", async () => {
    const none = await readEverywhere(new Uint8Array());
    assert.deepEqual(none, {
      code: 12,
      message: "protocol error: missing input message for unary method",
    });
    const one = envelope(request("a"));
    const two = await readEverywhere(Buffer.concat([one, one]));
    assert.deepEqual(two, {
      code: 12,
      message: "protocol error: received extra input message for unary method",
    });
  });

  it("an envelope cut short: INVALID_ARGUMENT", async () => {
    const r = await readEverywhere(envelope(request("a"), 0, 40));
    assert.equal(r?.code, 3);
    assert.equal(r?.message, "protocol error: incomplete envelope");
  });

  it("a message over the limit: RESOURCE_EXHAUSTED, its bytes never all read", async () => {
    const r = await readEverywhere(envelope(request("x".repeat(READ_MAX_BYTES * 4))));
    assert.equal(r?.code, 8);
    assert.match(r?.message ?? "", /larger than configured readMaxBytes 64/);
  });

  it("gRPC-Web: the message before an end-of-stream envelope", async () => {
    const body = Buffer.concat([envelope(request("web")), envelope(new Uint8Array(), trailerFlag)]);
    const r = await readEverywhere(body, { "content-type": "application/grpc-web+proto" });
    assert.equal(r?.service, "web");
  });
});

describe("the single message of a body", () => {
  const body = (...chunks: Buffer[]) => ({
    chunks,
    total: chunks.reduce((n, c) => n + c.length, 0),
    ended: true,
  });

  it("is the message of exactly one uncompressed envelope within the limit, whatever its chunks", () => {
    const whole = envelope(request("svc"));
    const message = Buffer.from(request("svc"));
    assert.deepEqual(singleMessage(body(whole), READ_MAX_BYTES), message);
    const split = [whole.subarray(0, 3), whole.subarray(3)];
    assert.deepEqual(singleMessage(body(...split), READ_MAX_BYTES), message);
  });

  it("is none for anything else: short, compressed, over the limit, cut, or followed by more", () => {
    const whole = envelope(request("svc"));
    for (const bytes of [
      Buffer.alloc(3),
      envelope(request("svc"), 1),
      envelope(request("x".repeat(100))),
      whole.subarray(0, whole.length - 1),
      Buffer.concat([whole, whole]),
    ]) {
      assert.equal(singleMessage(body(bytes), READ_MAX_BYTES), undefined);
    }
  });
});

describe("the announced size of an envelope", () => {
  it("is too large once its 5-byte prefix announces more than the limit", () => {
    const announced = announcedEnvelope(READ_MAX_BYTES);
    assert.equal(announced.bytes, ENVELOPE_HEAD_BYTES);
    assert.equal(announced.tooLarge(envelope(new Uint8Array(), 0, READ_MAX_BYTES)), false);
    assert.equal(announced.tooLarge(envelope(new Uint8Array(), 0, READ_MAX_BYTES + 1)), true);
  });
});
