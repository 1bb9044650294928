import cluster from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

/**
 * One `/metrics` answer for the whole service when it runs as several
 * worker processes: the worker that takes the scrape asks the primary, the
 * primary collects every worker's registry over node:cluster's IPC channel
 * and sums them (prom-client's aggregation: counters and histograms add up),
 * so a scrape never depends on which worker the kernel picked. It needs
 * worker processes: Tested by test/integration/workers.test.ts.
 */

/** One registry's metrics as `getMetricsAsJSON` gives them. */
type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

const ASK = "perps-metrics:ask";
const COLLECT = "perps-metrics:collect";
const COLLECTED = "perps-metrics:collected";
const ANSWER = "perps-metrics:answer";

interface MetricsMessage {
  type: typeof ASK | typeof COLLECT | typeof COLLECTED | typeof ANSWER;
  id: number;
  metrics?: MetricsJson;
  text?: string;
  error?: string;
}

function isMetricsMessage(value: unknown): value is MetricsMessage {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const { type, id } = value as { type?: unknown; id?: unknown };
  return (
    typeof id === "number" &&
    (type === ASK || type === COLLECT || type === COLLECTED || type === ANSWER)
  );
}

export interface ClusterMetricsOptions {
  /** How long the primary waits for every worker's part. Default 2000 ms. */
  timeoutMs?: number;
  /** The primary's own metrics (worker restarts), added to the workers'. Default none. */
  registry?: Registry;
}

/**
 * In the primary: answers each worker's ask with the sum of every live
 * worker's metrics. A worker that does not answer in time is left out (and
 * the answer says so in a comment line) rather than failing the scrape.
 */
export function serveClusterMetrics(opts: ClusterMetricsOptions = {}): void {
  const timeoutMs = opts.timeoutMs ?? 2000;
  let nextId = 0;
  const pending = new Map<number, { parts: MetricsJson[]; left: number; done: () => void }>();

  cluster.on("message", (worker, message: unknown) => {
    if (!isMetricsMessage(message)) {
      return;
    }
    if (message.type === COLLECTED) {
      const collection = pending.get(message.id);
      if (collection !== undefined && message.metrics !== undefined) {
        collection.parts.push(message.metrics);
        collection.left--;
        if (collection.left === 0) {
          collection.done();
        }
      }
      return;
    }
    if (message.type !== ASK) {
      return;
    }
    const asked = message.id;
    const id = nextId++;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected() === true);
    const parts: MetricsJson[] = [];
    const reply = async (missing: number) => {
      pending.delete(id);
      clearTimeout(timer);
      let answer: MetricsMessage;
      try {
        if (opts.registry !== undefined) {
          parts.push(await opts.registry.getMetricsAsJSON());
        }
        const text = await AggregatorRegistry.aggregate(parts).metrics();
        const note =
          missing > 0 ? `# ${missing} of ${workers.length} workers did not answer in time\n` : "";
        answer = { type: ANSWER, id: asked, text: note + text };
      } catch (err) {
        answer = { type: ANSWER, id: asked, error: String(err) };
      }
      if (worker.isConnected()) {
        worker.send(answer);
      }
    };
    const timer = setTimeout(() => void reply(pending.get(id)?.left ?? 0), timeoutMs);
    pending.set(id, { parts, left: workers.length, done: () => void reply(0) });
    for (const w of workers) {
      w?.send({ type: COLLECT, id } satisfies MetricsMessage);
    }
    if (workers.length === 0) {
      void reply(0);
    }
  });
}

/**
 * In a worker: hands this worker's metrics to the primary when it collects,
 * and returns the function that answers a scrape with the whole service's.
 */
export function clusterMetricsSource(
  registry: Registry,
  opts: ClusterMetricsOptions = {},
): () => Promise<string> {
  const timeoutMs = (opts.timeoutMs ?? 2000) + 1000;
  let nextId = 0;
  const waiting = new Map<number, (message: MetricsMessage) => void>();
  process.on("message", (message: unknown) => {
    if (!isMetricsMessage(message)) {
      return;
    }
    if (message.type === COLLECT) {
      registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: COLLECTED, id: message.id, metrics }),
        () => process.send?.({ type: COLLECTED, id: message.id, metrics: [] }),
      );
    } else if (message.type === ANSWER) {
      waiting.get(message.id)?.(message);
    }
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error("the primary did not answer the metrics request"));
      }, timeoutMs);
      waiting.set(id, (answer) => {
        waiting.delete(id);
        clearTimeout(timer);
        if (answer.text !== undefined) {
          resolve(answer.text);
        } else {
          reject(new Error(answer.error ?? "no metrics"));
        }
      });
      process.send?.({ type: ASK, id } satisfies MetricsMessage);
    });
}
