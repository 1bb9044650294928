import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { createServiceMetrics } from "../../../src/metrics/service-metrics.js";
import { Exchange } from "../../../src/server/exchange.js";
import { createExchangeReport } from "../../../src/server/exchange-report.js";
import { createCallTracing } from "../../../src/tracing/call-tracing.js";
import { keptLogLines } from "../../support/kept-log-lines.js";

const CREATE = "perps.token.v1.TokenService/CreateToken";

/** A report whose lines (debug and up) are kept, parsed, and whose counts can be read. */
function reported() {
  const { logger, lines } = keptLogLines();
  const metrics = createServiceMetrics({ processMetrics: false });
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracing = createCallTracing(provider.getTracer("t"), new W3CTraceContextPropagator());
  const report = createExchangeReport({
    logger,
    metrics,
    tracing,
  });
  const count = async (method: string, protocol: string, code: string) => {
    const metric = await metrics.requests.get();
    const sample = metric.values.find(
      (v) => v.labels.method === method && v.labels.protocol === protocol && v.labels.code === code,
    );
    return sample?.value ?? 0;
  };
  return { report, lines, count, tracing, exporter };
}

/** An exchange of `method` over `protocol`, answered with `status` unless told it was not. */
function exchangeOf(requestId: string, method: string, protocol: string, status?: number) {
  const exchange = new Exchange(requestId, performance.now());
  exchange.nameCall(method, protocol);
  if (status !== undefined) {
    exchange.recordSent(status);
  }
  return exchange;
}

describe("the report of an exchange", () => {
  it("an answered call: one info line and one count, ok", async () => {
    const { report, lines, count } = reported();
    report.exchange(exchangeOf("r-1", CREATE, "grpc", 200), "application/grpc");
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.msg, "request");
    assert.equal(lines[0]?.level, 30);
    assert.equal(lines[0]?.requestId, "r-1");
    assert.equal(lines[0]?.code, "ok");
    assert.equal(typeof lines[0]?.ms, "number");
    assert.equal(await count(CREATE, "grpc", "ok"), 1);
  });

  it("a probe's answer: counted, its line a debug line", async () => {
    const { report, lines, count } = reported();
    const probe = exchangeOf("r-2", "http", "http", 200);
    probe.markProbe();
    report.exchange(probe, undefined);
    assert.equal(lines[0]?.level, 20);
    assert.equal(await count("http", "http", "ok"), 1);
  });

  it("the caller's failure: an info line with what it was told; the code from the status when none was noted", async () => {
    const { report, lines, count } = reported();
    const refused = exchangeOf("r-3", CREATE, "rest", 400);
    refused.recordOutcome(Code.InvalidArgument, "name: too long");
    report.exchange(refused, "application/json");
    const limited = exchangeOf("r-4", CREATE, "rest", 429);
    report.exchange(limited, "application/json");
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.code, l.message]),
      [
        [30, "request", "InvalidArgument", "name: too long"],
        [30, "request", "ResourceExhausted", "Too Many Requests"],
      ],
    );
    assert.equal(await count(CREATE, "rest", "invalid_argument"), 1);
    assert.equal(await count(CREATE, "rest", "resource_exhausted"), 1);
  });

  it("our own failure: an error line with its cause", async () => {
    const { report, lines } = reported();
    const failed = exchangeOf("r-5", CREATE, "connect", 503);
    failed.recordOutcome(Code.Unavailable, "Error: ECONNREFUSED 10.0.0.7:6379");
    report.exchange(failed, "application/proto");
    assert.equal(lines[0]?.level, 50);
    assert.equal(lines[0]?.msg, "request failed");
    assert.equal(lines[0]?.cause, "Error: ECONNREFUSED 10.0.0.7:6379");
  });

  it("a readiness probe's 503 is the probe working: an info line, not an error", async () => {
    const { report, lines } = reported();
    const readiness = exchangeOf("r-6", "http", "http", 503);
    readiness.markProbe();
    report.exchange(readiness, undefined);
    assert.equal(lines[0]?.level, 30);
    assert.equal(lines[0]?.code, "Unavailable");
    const auth = exchangeOf("r-7", "forward-auth", "http", 503);
    report.exchange(auth, undefined);
    assert.equal(lines[1]?.level, 50, "forward-auth's 503 is a failure");
  });

  it("a client that left before the answer: CANCELED, a debug line", async () => {
    const { report, lines, count } = reported();
    report.exchange(exchangeOf("r-8", CREATE, "grpc"), "application/grpc");
    assert.equal(lines[0]?.level, 20);
    assert.equal(lines[0]?.msg, "request abandoned");
    assert.equal(lines[0]?.code, "Canceled");
    assert.equal(await count(CREATE, "grpc", "canceled"), 1);
  });

  it("a gRPC request of no RPC of ours is labelled by its protocol", async () => {
    const { report, count } = reported();
    const unknown = exchangeOf("r-9", "http", "http", 200);
    unknown.recordOutcome(Code.Unimplemented, "unknown method");
    report.exchange(unknown, "application/grpc-web+proto");
    assert.equal(await count("http", "grpc-web", "unimplemented"), 1);
  });

  it("a traced exchange: its span ends with the outcome, its line names the trace", async () => {
    const { report, lines, tracing, exporter } = reported();
    const traced = exchangeOf("r-10", CREATE, "grpc", 200);
    traced.trace = tracing.start({
      httpMethod: "POST",
      httpVersion: "2",
      traceparent: undefined,
      tracestate: undefined,
      trusted: false,
      startTime: performance.now(),
    });
    report.exchange(traced, "application/grpc");
    assert.equal(lines[0]?.traceId, traced.trace.traceId);
    const [span] = exporter.getFinishedSpans();
    assert.equal(span?.name, CREATE);
    assert.equal(span?.attributes["rpc.grpc.status_code"], 0);
    assert.equal(span?.attributes["perps.request_id"], "r-10");
  });
});

describe("the report of a transport's own answer", () => {
  it("one info line with its status and Node's reason, and one count", async () => {
    const { report, lines, count } = reported();
    report.transportAnswer({
      status: 431,
      code: Code.ResourceExhausted,
      requestId: "r-11",
      reason: "HPE_HEADER_OVERFLOW",
      protocol: "http1",
    });
    assert.deepEqual(
      lines.map((l) => [l.level, l.method, l.protocol, l.code, l.status, l.message]),
      [[30, "http", "http1", "ResourceExhausted", 431, "HPE_HEADER_OVERFLOW"]],
    );
    assert.equal(await count("http", "http", "resource_exhausted"), 1);
  });
});
