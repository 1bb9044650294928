// The OpenTelemetry SDK wired to an OTLP/HTTP exporter: what it does shows as
// spans a collector receives from a running service.
// Tested by test/integration/tracing.test.ts, test/integration/trace-printer.test.ts.

import type { TracingConfig } from "../config/tracing-config.js";
import { type CallTracing, createCallTracing } from "./call-tracing.js";

/** Tracing that sends its spans to an OTLP/HTTP endpoint. */
export interface OtlpTracing {
  readonly tracing: CallTracing;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK and its OTLP/HTTP protobuf exporter, loaded only
 * here, only when tracing is configured: a service without OTEL_* variables
 * never imports them. Spans leave in batches (OTEL_BSP_SCHEDULE_DELAY); the
 * context of the active exchange follows its promises through an
 * AsyncLocalStorage context manager, which is the OpenTelemetry API's one
 * global (`context.setGlobalContextManager`).
 */
export async function startOtlpTracing(config: TracingConfig): Promise<OtlpTracing> {
  const [api, sdk, exporterModule, resources, core, asyncHooks] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/exporter-trace-otlp-proto"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/core"),
    import("@opentelemetry/context-async-hooks"),
  ]);
  const ratio = new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const samplers = {
    always_on: new sdk.AlwaysOnSampler(),
    always_off: new sdk.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: new sdk.ParentBasedSampler({ root: ratio }),
  };
  const exporter = new exporterModule.OTLPTraceExporter({
    url: config.url,
    headers: config.headers,
  });
  const provider = new sdk.TracerProvider({
    sampler: samplers[config.sampler],
    resource: resources.resourceFromAttributes({
      ...config.resourceAttributes,
      "service.name": config.serviceName,
    }),
    spanProcessors: [
      new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: config.scheduleDelayMs }),
    ],
  });
  const contextManager = new asyncHooks.AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  return {
    tracing: createCallTracing(
      provider.getTracer("perps-token-service"),
      new core.W3CTraceContextPropagator(),
    ),
    async shutdown() {
      await provider.shutdown();
      api.context.disable();
    },
  };
}
