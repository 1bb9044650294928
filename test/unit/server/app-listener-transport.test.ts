import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createServiceMetrics } from "../../../src/metrics/service-metrics.js";
import { createAnswerTelemetry } from "../../../src/server/answer-telemetry.js";
import { listenerTransport } from "../../../src/server/app.js";
import { keptLogLines } from "../../support/kept-log-lines.js";

const TLS = { cert: "CERT PEM", key: "KEY PEM" };

/** Both listeners' transports over one logger (lines kept, debug and up) and metrics. */
function transports(opts: { tls?: typeof TLS; adminClientCa?: string } = {}) {
  const { logger, lines } = keptLogLines();
  const metrics = createServiceMetrics({ processMetrics: false });
  const telemetry = createAnswerTelemetry({ logger, metrics });
  const options = {
    logger,
    ...opts,
    listenerLimits: { requestTimeoutMs: 3000, answerTimeoutMs: 10_000, maxConnections: 50 },
  };
  return {
    lines,
    metrics,
    telemetry,
    public: listenerTransport("public", options, telemetry, metrics),
    internal: listenerTransport("internal", options, telemetry, metrics),
  };
}

describe("a listener's transport", () => {
  it("is cleartext without TLS, and carries the configured limits", () => {
    const t = transports();
    assert.equal(t.public.tls, undefined);
    assert.equal(t.public.requestTimeoutMs, 3000);
    assert.equal(t.internal.maxConnections, 50);
  });

  it("serves TLS on both listeners, asking client certificates on the internal one only", () => {
    const t = transports({ tls: TLS, adminClientCa: "CA PEM" });
    assert.deepEqual(t.public.tls, TLS);
    assert.deepEqual(t.internal.tls, { ...TLS, clientCa: "CA PEM" });
    assert.deepEqual(transports({ tls: TLS }).internal.tls, TLS);
  });

  it("logs a broken HTTP/2 protocol as an info line naming the code, other client errors as debug", () => {
    const t = transports();
    t.public.onClientError?.(
      Object.assign(new Error("Stream closed with error code NGHTTP2_PROTOCOL_ERROR"), {
        code: "ERR_HTTP2_STREAM_ERROR",
      }),
      "http2-stream",
    );
    t.internal.onClientError?.(
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      "socket",
    );
    assert.deepEqual(
      t.lines.map((l) => [l.level, l.msg, l.listener, l.source, l.err, l.h2Code]),
      [
        [
          30,
          "client protocol error",
          "public",
          "http2-stream",
          "ERR_HTTP2_STREAM_ERROR",
          "NGHTTP2_PROTOCOL_ERROR",
        ],
        [20, "client connection error", "internal", "socket", "ECONNRESET", undefined],
      ],
    );
  });

  it("warns of a listener's own error, and counts its open connections by listener", async () => {
    const t = transports();
    t.internal.onServerError?.(new Error("accept EMFILE"));
    assert.deepEqual(
      t.lines.map((l) => [l.level, l.msg, l.listener, l.err]),
      [[40, "listener error", "internal", "Error: accept EMFILE"]],
    );
    t.public.onOpenConnections?.(3);
    t.internal.onOpenConnections?.(1);
    const gauge = await t.metrics.openConnections.get();
    assert.deepEqual(
      gauge.values.map((v) => [v.labels.listener, v.value]),
      [
        ["public", 3],
        ["internal", 1],
      ],
    );
  });

  it("reports the transport's own answers to the listener's telemetry", () => {
    const t = transports();
    assert.equal(t.public.onTransportAnswer, t.telemetry.transportAnswer);
  });
});
