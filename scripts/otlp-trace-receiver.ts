import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import protobuf from "protobufjs";

// An OTLP/HTTP protobuf trace receiver: what a collector does with the service's
// exports, reduced to decoding them. Used by scripts/trace-printer.ts (spans
// printed without a collector) and by the tracing tests.

// The official OTLP definitions, copied unedited from opentelemetry-proto v1.9.0
// (scripts/otlp-proto/README.md): no installed package ships them as .proto files.
const PROTOS = join(import.meta.dirname, "otlp-proto");

export interface KeyValue {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    boolValue?: boolean;
    doubleValue?: number;
  };
}

export interface OtlpSpan {
  /** base64, as protobufjs writes bytes (`hexId` turns an id into W3C's hex). */
  traceId: string;
  spanId: string;
  traceState?: string;
  links?: { traceId: string; spanId: string; traceState?: string }[];
  /** Absent on a root span. */
  parentSpanId?: string;
  name: string;
  kind: number;
  /** Unix ns, as decimal text. */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KeyValue[];
  status?: { code?: number; message?: string };
}

export interface ExportRequest {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

/** What the receiver was sent: the request's path and headers, and its decoded body. */
export interface ReceivedExport {
  readonly path: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly request: ExportRequest;
}

export interface OtlpTraceReceiver {
  readonly server: Server;
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly url: string;
  close(): Promise<void>;
}

/** A span or trace id (protobufjs' base64) as W3C writes it, in hex. */
export const hexId = (base64: string | undefined): string =>
  Buffer.from(base64 ?? "", "base64").toString("hex");

/** Every span of an export request. */
export function spansOf(request: ExportRequest): OtlpSpan[] {
  return request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

/** An attribute's value as JavaScript: text, number or boolean. */
export function attributeValue(
  value: KeyValue["value"] | undefined,
): string | number | boolean | undefined {
  if (value?.intValue !== undefined) {
    return Number(value.intValue);
  }
  return value?.stringValue ?? value?.doubleValue ?? value?.boolValue;
}

/** Listens on `host`:`port` (0: any free port) and hands each export to `onExport`. */
export async function startOtlpTraceReceiver(options: {
  host?: string;
  port?: number;
  onExport: (received: ReceivedExport) => void;
}): Promise<OtlpTraceReceiver> {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTOS, target);
  await root.load("opentelemetry/proto/collector/trace/v1/trace_service.proto");
  const type = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let request: ExportRequest;
      try {
        const message = type.decode(Buffer.concat(chunks));
        request = type.toObject(message, {
          bytes: String,
          longs: String,
          enums: Number,
        }) as ExportRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      options.onExport({ path: req.url, headers: req.headers, request });
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, host, done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        // An exporter keeps its connection open between batches.
        server.closeAllConnections();
      }),
  };
}
