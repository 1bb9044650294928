import assert from "node:assert/strict";
import { createServer as createHttp1Server, type IncomingHttpHeaders } from "node:http";
import { connect, createServer as createHttp2Server } from "node:http2";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { trailerParse } from "@connectrpc/connect/protocol-grpc-web";
import { compressionGzip } from "@connectrpc/connect-node";
import { Exchange } from "../../../../src/server/exchange.js";
import { detach } from "../../../../src/server/wire/answer-failure.js";
import {
  answerGrpcError,
  answerGrpcResult,
  type GrpcAnswerFormat,
  type GrpcAnswerTarget,
  refuseGrpc,
} from "../../../../src/server/wire/grpc-answer.js";
import { holdStream, within } from "../../../support/held-stream.js";
import { serverPool } from "../../../support/server-pool.js";
import { type Answer, type Sent, send } from "../../../support/wire-exchange.js";

const MESSAGE = Buffer.from("the answer's message bytes");
const LARGE = Buffer.alloc(2048, "a");

/** The exchange of each request, by its x-n header. */
const exchanges = new Map<string, Exchange>();

/** The answer format a request's test headers ask for. */
function formatOf(headers: IncomingHttpHeaders, exchange: Exchange): GrpcAnswerFormat {
  const web = headers["x-protocol"] !== "grpc";
  const text = headers["x-protocol"] === "grpc-web-text";
  return {
    protocol: web ? "grpc-web" : "grpc",
    contentType: text
      ? "application/grpc-web-text"
      : web
        ? "application/grpc-web+proto"
        : "application/grpc+proto",
    text,
    compression: headers["x-compress"] === "gzip" ? compressionGzip : null,
    compressMinBytes: 1024,
    exchange,
  };
}

/** Answers as the request's path says: a result, a call's error, or a refusal made before the call. */
function answer(to: GrpcAnswerTarget, path: string, headers: IncomingHttpHeaders): void {
  const n = String(headers["x-n"]);
  const exchange = new Exchange(`req-${n}`, 0);
  exchanges.set(n, exchange);
  if (!("respond" in to)) {
    // The listener gives node's responses their request id; a raw stream's answer writes it.
    to.setHeader("x-request-id", exchange.requestId);
  }
  const format = formatOf(headers, exchange);
  const error = new ConnectError("no, ünïcode", Code.PermissionDenied, { "x-why": "because" });
  switch (path) {
    case "/result":
      detach(
        answerGrpcResult(
          to,
          format,
          new Headers({ "x-header": "h" }),
          new Headers({ "x-trailer": "t" }),
          headers["x-large"] === undefined ? MESSAGE : LARGE,
        ),
      );
      break;
    case "/error":
      detach(answerGrpcError(to, format, error));
      break;
    default:
      detach(refuseGrpc(to, format, error));
  }
}

describe("the gRPC and gRPC-Web answer writer", () => {
  const pool = serverPool();
  const ports = { http1: 0, http2: 0, stream: 0 };

  before(async () => {
    ports.http1 = await pool.listen(
      createHttp1Server((req, res) => answer(res, req.url ?? "", req.headers)),
    );
    ports.http2 = await pool.listen(
      createHttp2Server((req, res) => answer(res, req.url ?? "", req.headers)),
    );
    const raw = createHttp2Server();
    raw.on("stream", (stream, headers) => answer(stream, String(headers[":path"]), headers));
    ports.stream = await pool.listen(raw);
  });
  after(() => pool.closeAll());

  let counter = 0;

  /**
   * The gRPC answer to `path` from node's HTTP/2 response and from a raw
   * stream, the same but for the request id; and their exchanges.
   */
  async function grpcAnswer(path: string, headers: Record<string, string> = {}) {
    const sent = (n: string): Sent => ({
      http2: true,
      path,
      headers: { "content-type": "application/grpc", "x-protocol": "grpc", "x-n": n, ...headers },
      body: "",
    });
    const [nCompat, nStream] = [String(counter++), String(counter++)];
    const [compat, stream] = await Promise.all([
      send(ports.http2, sent(nCompat)),
      send(ports.stream, sent(nStream)),
    ]);
    assert.equal(compat.headers["x-request-id"], `req-${nCompat}`);
    assert.equal(stream.headers["x-request-id"], `req-${nStream}`);
    const withoutId = (a: Answer) => ({
      ...a,
      headers: { ...a.headers, "x-request-id": "" },
      trailers: { ...a.trailers, "x-request-id": "" },
    });
    assert.deepEqual(withoutId(stream), withoutId(compat));
    return { answer: stream, exchanges: [exchanges.get(nCompat), exchanges.get(nStream)] };
  }

  it("gRPC, a result: 200, the headers, one envelope, grpc-status 0 and the trailers", async () => {
    const { answer } = await grpcAnswer("/result");
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["content-type"], "application/grpc+proto");
    assert.equal(answer.headers["x-header"], "h");
    assert.deepEqual(
      answer.body,
      Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]),
    );
    assert.equal(answer.trailers["grpc-status"], "0");
    assert.equal(answer.trailers["x-trailer"], "t");
  });

  it("gRPC, a large result to a client that accepts gzip: compressed, as Connect compresses it", async () => {
    const { answer } = await grpcAnswer("/result", { "x-compress": "gzip", "x-large": "yes" });
    assert.equal(answer.headers["grpc-encoding"], "gzip");
    assert.equal(answer.body[0], 1, "the compressed flag");
    assert.deepEqual(gunzipSync(answer.body.subarray(5)), LARGE);
    const { answer: small } = await grpcAnswer("/result", { "x-compress": "gzip" });
    assert.equal(small.body[0], 0, "below compressMinBytes: as it is");
  });

  it("gRPC, an error: no message, its code, words and metadata in the trailers, with the request id", async () => {
    const { answer, exchanges: told } = await grpcAnswer("/error");
    assert.equal(answer.status, 200);
    assert.equal(answer.body.length, 0);
    assert.equal(answer.trailers["grpc-status"], String(Code.PermissionDenied));
    assert.equal(decodeURIComponent(String(answer.trailers["grpc-message"])), "no, ünïcode");
    assert.equal(answer.trailers["x-why"], "because");
    assert.match(String(answer.trailers["x-request-id"]), /^req-\d+$/);
    for (const exchange of told) {
      assert.equal(exchange?.code, undefined, "a call's error is the interceptors' to note");
    }
  });

  it("a refusal before the call: the same answer, and the exchange told", async () => {
    const { answer, exchanges: told } = await grpcAnswer("/refuse");
    assert.equal(answer.trailers["grpc-status"], String(Code.PermissionDenied));
    for (const exchange of told) {
      assert.equal(exchange?.code, Code.PermissionDenied);
      assert.equal(exchange?.message, "no, ünïcode");
    }
  });

  it("gRPC-Web: the trailers in the body's last envelope, on HTTP/1.1 and HTTP/2 alike", async () => {
    // Node's responses only: a raw stream is taken for gRPC alone (grpc-stream-unary.ts).
    for (const [port, http2] of [
      [ports.http1, false],
      [ports.http2, true],
    ] as const) {
      const n = String(counter++);
      const answer = await send(port, {
        http2,
        path: "/result",
        headers: { "content-type": "application/grpc-web", "x-protocol": "grpc-web", "x-n": n },
        body: "",
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "application/grpc-web+proto");
      assert.deepEqual(answer.trailers, {});
      const length = answer.body.readUInt32BE(1);
      assert.deepEqual(answer.body.subarray(5, 5 + length), MESSAGE);
      const trailer = answer.body.subarray(5 + length);
      assert.equal(trailer[0], 0x80, "a trailer envelope");
      const parsed = trailerParse(trailer.subarray(5));
      assert.equal(parsed.get("grpc-status"), "0");
      assert.equal(parsed.get("x-trailer"), "t");
    }
  });

  it("gRPC-Web-Text: the same envelopes, in base64", async () => {
    const answer = await send(ports.http1, {
      http2: false,
      path: "/error",
      headers: {
        "content-type": "application/grpc-web-text",
        "x-protocol": "grpc-web-text",
        "x-n": String(counter++),
      },
      body: "",
    });
    assert.equal(answer.headers["content-type"], "application/grpc-web-text");
    const bytes = Buffer.from(answer.body.toString(), "base64");
    assert.equal(bytes[0], 0x80);
    assert.equal(trailerParse(bytes.subarray(5)).get("grpc-status"), String(Code.PermissionDenied));
  });

  it("answering before the request's body ended reads no more of it: the stream ends after the trailers", async () => {
    for (const port of [ports.http2, ports.stream]) {
      const session = connect(`http://127.0.0.1:${port}`);
      try {
        const held = holdStream(session, "/refuse", {
          "content-type": "application/grpc",
          "x-protocol": "grpc",
          "x-n": String(counter++),
        });
        held.stream.write(Buffer.from([0, 0, 0, 1, 0]));
        // Bounded only so that a stream left open fails the test rather than hang it.
        const closed = await within(held.closed, 10_000, "the stream's end");
        assert.equal(closed.trailers["grpc-status"], String(Code.PermissionDenied));
        assert.equal(closed.rstCode, 0, "NO_ERROR: the answer was whole");
        // Only the stream ended: the session goes on.
        await new Promise<void>((resolve, reject) =>
          session.ping((err) => (err === null ? resolve() : reject(err))),
        );
      } finally {
        session.destroy();
      }
    }
  });
});
