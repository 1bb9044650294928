import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createContextValues } from "@connectrpc/connect";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { HealthCheckResponse_ServingStatus } from "../../../src/gen/health/v1/health_pb.js";
import { Exchange, exchangeKey } from "../../../src/server/exchange.js";
import { traceContextInterceptor } from "../../../src/server/interceptor-chain.js";
import { createCallTracing } from "../../../src/tracing/call-tracing.js";
import { callHealthCheck } from "../../support/health-check-call.js";

describe("the trace context interceptor", () => {
  // The service sets a context manager when tracing is on (otlp-tracing.ts): without one no span is ever active.
  const manager = new AsyncLocalStorageContextManager();
  before(() => {
    context.setGlobalContextManager(manager.enable());
  });
  after(() => {
    context.disable();
  });

  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracing = createCallTracing(provider.getTracer("t"), new W3CTraceContextPropagator());

  /** The span active in the implementation of a call on `exchange`, and whether a Redis span could start there. */
  async function activeInCall(exchange: Exchange | undefined) {
    const contextValues = createContextValues();
    contextValues.set(exchangeKey, exchange);
    let spanId: string | undefined;
    let redisSpan = false;
    await callHealthCheck({
      interceptors: [traceContextInterceptor(tracing)],
      contextValues,
      check: async () => {
        // As a store's Redis call is made: after an await, from a later turn.
        await new Promise((resolve) => setImmediate(resolve));
        spanId = trace.getSpan(context.active())?.spanContext().spanId;
        const end = tracing.redis("keys.read");
        redisSpan = end !== undefined;
        end?.(false);
        return { status: HealthCheckResponse_ServingStatus.SERVING };
      },
    });
    return { spanId, redisSpan };
  }

  it("runs the call with its exchange's span active: its Redis operations are that span's children", async () => {
    const exchange = new Exchange("id", performance.now());
    exchange.trace = tracing.start({
      httpMethod: "POST",
      httpVersion: "2",
      traceparent: undefined,
      tracestate: undefined,
      trusted: false,
      startTime: performance.now(),
    });
    const seen = await activeInCall(exchange);
    const exchangeSpan = exchange.trace.span.spanContext().spanId;
    assert.equal(seen.spanId, exchangeSpan);
    assert.equal(seen.redisSpan, true);
    const redis = exporter.getFinishedSpans().find((s) => s.name === "keys.read");
    assert.equal(redis?.parentSpanContext?.spanId, exchangeSpan);
  });

  it("runs a call whose exchange is not traced, or that has none, as it is", async () => {
    for (const exchange of [new Exchange("id", 0), undefined]) {
      const seen = await activeInCall(exchange);
      assert.equal(seen.spanId, undefined);
      assert.equal(seen.redisSpan, false);
    }
  });
});
