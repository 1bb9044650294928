import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { createCallTracing } from "../../../src/tracing/call-tracing.js";

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

/** One exchange's span under `root` (a parent-based sampler's rule for a trace's first span). */
async function oneSpan(trusted: boolean, flags: "00" | "01", root = new AlwaysOnSampler()) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracing = createCallTracing(provider.getTracer("t"), new W3CTraceContextPropagator());
  const call = tracing.start({
    httpMethod: "POST",
    httpVersion: "2",
    traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-${flags}`,
    tracestate: "leak=pt_secret",
    trusted,
    startTime: performance.now(),
  });
  tracing.finish(call, {
    method: "perps.token.v1.TokenService/CreateToken",
    protocol: "connect",
    status: 200,
    code: "ok",
    grpcStatus: 0,
    serverFault: false,
    requestId: "r",
  });
  await provider.forceFlush();
  return { spans: exporter.getFinishedSpans(), traceId: call.traceId };
}

describe("call tracing: the caller's trace context", () => {
  it("trusted: continued, its sampled flag and tracestate included", async () => {
    const sampled = await oneSpan(true, "01");
    assert.equal(sampled.traceId, CALLER_TRACE);
    assert.equal(sampled.spans[0]?.parentSpanContext?.spanId, CALLER_SPAN);
    assert.equal(sampled.spans[0]?.spanContext().traceState?.serialize(), "leak=pt_secret");
    assert.equal((await oneSpan(true, "00")).spans.length, 0, "the caller said: not sampled");
  });

  it("untrusted: a trace of its own, sampled by the root rule, linked without tracestate", async () => {
    for (const flags of ["00", "01"] as const) {
      const { spans, traceId } = await oneSpan(false, flags);
      assert.equal(spans.length, 1, `sampled whatever the caller's flag (${flags})`);
      const span = spans[0];
      assert.notEqual(traceId, CALLER_TRACE);
      assert.equal(span?.parentSpanContext, undefined);
      assert.equal(span?.spanContext().traceState, undefined);
      assert.equal(span?.links.length, 1);
      assert.equal(span?.links[0]?.context.traceId, CALLER_TRACE);
      assert.equal(span?.links[0]?.context.spanId, CALLER_SPAN);
      assert.equal(span?.links[0]?.context.traceState, undefined);
    }
    assert.equal(
      (await oneSpan(false, "01", new AlwaysOffSampler())).spans.length,
      0,
      "nor forced on",
    );
  });
});
