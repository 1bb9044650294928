// The part of autocannon 8's API the benchmark uses; the package ships no types.
declare module "autocannon" {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    /** Requests per second over all connections (open-model rate limit). */
    overallRate?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
    }[];
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  /** The running load: emits "response" (client, statusCode, resBytes, responseTimeMs). */
  export interface Instance {
    on(
      event: "response",
      listener: (
        client: unknown,
        statusCode: number,
        resBytes: number,
        responseTimeMs: number,
      ) => void,
    ): Instance;
    stop(): void;
  }

  export default function autocannon(
    opts: AutocannonOptions,
    done: (err: Error | null, result: AutocannonResult) => void,
  ): Instance;
}
