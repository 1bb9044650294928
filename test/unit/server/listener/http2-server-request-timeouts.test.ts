import assert from "node:assert/strict";
import { once } from "node:events";
import {
  connect,
  constants,
  createServer,
  type Http2Server,
  type IncomingHttpHeaders,
} from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Exchange } from "../../../../src/server/exchange.js";
import { http2RequestTimeouts } from "../../../../src/server/listener/http2-server.js";
import type { TransportAnswer } from "../../../../src/server/transport-answer.js";

const REQUEST_TIMEOUT_MS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Outcome {
  headers: IncomingHttpHeaders;
  body: string;
  rstCode: number;
}

/** Sends a POST of `path` whose body ends only if `end`, and resolves once its stream closes. */
async function post(server: Http2Server, path: string, end: boolean): Promise<Outcome> {
  const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  session.on("error", () => {});
  try {
    const stream = session.request({ ":method": "POST", ":path": path });
    stream.on("error", () => {});
    const outcome: Outcome = { headers: {}, body: "", rstCode: 0 };
    stream.on("response", (headers) => {
      outcome.headers = headers;
    });
    stream.on("data", (chunk: Buffer) => {
      outcome.body += chunk.toString();
    });
    stream.write("{");
    if (end) {
      stream.end();
    }
    await once(stream, "close");
    outcome.rstCode = stream.rstCode ?? 0;
    return outcome;
  } finally {
    session.close();
  }
}

describe("HTTP/2 request timeouts", () => {
  const told: TransportAnswer[] = [];
  const timeouts = http2RequestTimeouts(
    REQUEST_TIMEOUT_MS,
    (refusal, requestId, reason, protocol) =>
      told.push({ status: refusal.status, code: refusal.code, requestId, reason, protocol }),
  );
  let requests: Http2Server;
  let streams: Http2Server;
  const exchanges: Exchange[] = [];
  before(async () => {
    requests = createServer((req, res) => {
      if (req.url === "/named") {
        res.setHeader("x-request-id", "named-1");
      } else if (req.url === "/answering") {
        res.writeHead(200);
        res.write("part");
      } else if (req.url === "/late") {
        // Answered well after the timeout, the request having arrived in time.
        req.resume();
        req.on("end", () => setTimeout(() => res.end("late"), 3 * REQUEST_TIMEOUT_MS));
      }
    });
    requests.on("request", (req, res) => timeouts.limitRequest(req, res));
    streams = createServer();
    streams.on("stream", (stream, headers) => {
      const exchange = new Exchange(`exchange-${exchanges.length}`, performance.now());
      exchanges.push(exchange);
      if (headers[":path"] === "/answering") {
        stream.respond({ ":status": 200 });
        stream.write("part");
      }
      timeouts.limitStream(stream, exchange, headers);
    });
    for (const server of [requests, streams]) {
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
    }
  });
  after(() => {
    requests.close();
    streams.close();
  });

  it("answers a request still arriving 408 with a new id, then closes its stream; tells the refusal", async () => {
    const before = told.length;
    const outcome = await post(requests, "/silent", false);
    assert.equal(outcome.headers[":status"], 408);
    const requestId = outcome.headers["x-request-id"];
    assert.match(String(requestId), UUID);
    assert.equal(JSON.parse(outcome.body).code, 4);
    assert.equal(outcome.rstCode, constants.NGHTTP2_NO_ERROR);
    assert.deepEqual(told.slice(before), [
      {
        status: 408,
        code: 4,
        requestId,
        reason: "ERR_HTTP2_REQUEST_TIMEOUT",
        protocol: "http2",
      },
    ]);
  });

  it("keeps the id the handler gave the answer, and leaves the telling to the handler", async () => {
    const before = told.length;
    const outcome = await post(requests, "/named", false);
    assert.equal(outcome.headers[":status"], 408);
    assert.equal(outcome.headers["x-request-id"], "named-1");
    assert.equal(told.length, before);
  });

  it("cuts a request whose answer has begun (CANCEL), without another answer", async () => {
    const before = told.length;
    const outcome = await post(requests, "/answering", false);
    assert.equal(outcome.headers[":status"], 200);
    assert.equal(outcome.body, "part");
    assert.equal(outcome.rstCode, constants.NGHTTP2_CANCEL);
    assert.equal(told.length, before);
  });

  it("leaves alone a request that arrived in time, however late its answer", async () => {
    const outcome = await post(requests, "/late", true);
    assert.equal(outcome.headers[":status"], 200);
    assert.equal(outcome.body, "late");
  });

  // The listener's telemetry reads the 408 off the stream when it closes (answer-telemetry.ts).
  it("answers a stream taken off the stream 408 under its exchange's id, not reported apart", async () => {
    const before = told.length;
    const outcome = await post(streams, "/taken", false);
    const exchange = exchanges.at(-1);
    assert.equal(outcome.headers[":status"], 408);
    assert.equal(outcome.headers["x-request-id"], exchange?.requestId);
    assert.equal(told.length, before, "the exchange tells the answer");
  });

  it("cuts a taken stream whose answer has begun (CANCEL)", async () => {
    const outcome = await post(streams, "/answering", false);
    assert.equal(outcome.headers[":status"], 200);
    assert.equal(outcome.rstCode, constants.NGHTTP2_CANCEL);
  });
});
