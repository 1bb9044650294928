// Prints the service's spans without a collector or a container engine: an
// OTLP/HTTP receiver on 127.0.0.1:4318 (`--port` to change it; 0 for any free
// port) that writes one line per span it is sent. Run it, then start the
// service with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318
// (docs/logs-and-metrics.md, "Traces"). Stop it with Ctrl-C.

import { parseArgs } from "node:util";
import {
  attributeValue,
  hexId,
  type OtlpSpan,
  spansOf,
  startOtlpTraceReceiver,
} from "./otlp-trace-receiver.js";

const KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"];

/** One span as a line: trace, span and parent ids, kind, name, duration, status, attributes. */
function spanLine(span: OtlpSpan): string {
  const ms = Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;
  const parent = span.parentSpanId === undefined ? "-" : hexId(span.parentSpanId);
  const status = span.status?.code === 2 ? " ERROR" : "";
  const attributes = span.attributes
    .map((a) => `${a.key}=${String(attributeValue(a.value))}`)
    .join(" ");
  return `${hexId(span.traceId)} ${hexId(span.spanId)} < ${parent} ${KINDS[span.kind] ?? span.kind} "${span.name}" ${ms.toFixed(1)} ms${status} ${attributes}`;
}

const { values } = parseArgs({ options: { port: { type: "string", default: "4318" } } });
const receiver = await startOtlpTraceReceiver({
  port: Number(values.port),
  onExport: ({ request }) => {
    for (const span of spansOf(request)) {
      process.stdout.write(`${spanLine(span)}\n`);
    }
  },
});
process.stderr.write(
  `trace printer: set OTEL_EXPORTER_OTLP_ENDPOINT=${receiver.url}; one line per span: trace span < parent kind "name" duration attributes\n`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void receiver.close());
}
