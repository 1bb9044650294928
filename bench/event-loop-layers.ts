/** A layer of the create path, recognised by the names of the frames that belong to it. */
export interface Layer {
  readonly name: string;
  readonly frames: RegExp;
}

/**
 * The layers of a REST create on the event loop. Garbage collection first:
 * a sample taken during GC counts for GC, whatever JavaScript triggered it.
 */
export const GC_LAYER: Layer = {
  name: "Garbage collection (on the main thread)",
  frames: /Heap::CollectGarbage|Scavenge|MinorGC|MarkCompact|IncrementalMarking/,
};

/** The other layers, in no particular order: a sample counts for the innermost one on its stack. */
export const CREATE_PATH_LAYERS: readonly Layer[] = [
  {
    name: "The verify hand-off to the thread pool",
    frames: /verifyOneShot|CryptoJob<node::crypto::SignTraits>::Run|uv_queue_work|ed25519-verifier/,
  },
  { name: "The log line (pino)", frames: /\/pino\/|sonic-boom|src\/log\// },
  { name: "Metrics (prom-client)", frames: /prom-client|service-metrics/ },
  {
    name: "ioredis: the command, the pipeline, the socket write, the reply",
    frames: /ioredis|redis-parser|standard-as-callback|durable-writer|redis-runner/,
  },
  {
    name: "node:http response: headers and the socket write",
    frames: /writeResponse|_http_outgoing|ServerResponse/,
  },
  {
    name: "REST gateway: routing, body, strict JSON, transcoding, headers, JSON answer",
    frames: /src\/rest\/|@bufbuild\/protobuf|bufbuild\/protobuf|undici|webidl/,
  },
  {
    name: "Interceptors and invoker: request id, telemetry, error mapping",
    frames: /unary-invoker|interceptor-chain|request-id/,
  },
  {
    name: "Token service: checks, signed message, secrets and digests, the store call",
    frames: /src\/(token|protocol|store)\//,
  },
  {
    name: "node:http request: socket read, llhttp, request and response objects",
    frames:
      /llhttp|_http_server|_http_incoming|_http_common|Parser::|dual-protocol-server|src\/server\/listener\/|src\/server\/app|plain-endpoints|openapi-endpoint/,
  },
];

export const UNATTRIBUTED =
  "Promise and microtask machinery, timers, epoll, thread-pool completions (no single layer)";

/** Time per request in each layer, largest first. */
export interface LayerShare {
  readonly name: string;
  readonly microseconds: number;
  /** Fraction of all samples, 0..1. */
  readonly share: number;
}

/**
 * Splits `microsecondsPerRequest` of event-loop CPU over the layers, by the
 * share of `stacks` (each a list of frame names, innermost first, one per
 * sample of equal weight) that each layer holds.
 */
export function eventLoopLayers(
  stacks: readonly (readonly string[])[],
  microsecondsPerRequest: number,
): LayerShare[] {
  const counts = new Map<string, number>();
  for (const stack of stacks) {
    const layer = layerOf(stack);
    counts.set(layer, (counts.get(layer) ?? 0) + 1);
  }
  const total = Math.max(1, stacks.length);
  return [...counts]
    .map(([name, count]) => ({
      name,
      microseconds: Math.round((count / total) * microsecondsPerRequest * 10) / 10,
      share: count / total,
    }))
    .sort((a, b) => b.share - a.share);
}

function layerOf(stack: readonly string[]): string {
  if (stack.some((frame) => GC_LAYER.frames.test(frame))) {
    return GC_LAYER.name;
  }
  for (const frame of stack) {
    const layer = CREATE_PATH_LAYERS.find((l) => l.frames.test(frame));
    if (layer !== undefined) {
      return layer.name;
    }
  }
  return UNATTRIBUTED;
}

/**
 * The stacks of `perf script -F ip,sym` output: samples separated by blank
 * lines, one "<address> <symbol>" line per frame, innermost first.
 */
export function parsePerfScript(text: string): string[][] {
  return text
    .split(/\n\s*\n/)
    .map((block) =>
      block
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "")
        .map((line) => {
          const space = line.indexOf(" ");
          return space < 0 ? line : line.slice(space + 1);
        }),
    )
    .filter((stack) => stack.length > 0);
}
