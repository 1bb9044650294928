import type { ServiceMetrics } from "./service-metrics.js";

/** The request metrics of one method and protocol. */
export interface RequestSeries {
  readonly duration: { observe(seconds: number): void };
  calls(code: string): { inc(): void };
}

/**
 * The request metric series of each method and protocol, looked up once:
 * resolving label values to a series on every observation costs more than
 * the observation itself.
 */
export function createRequestSeries(
  metrics: ServiceMetrics,
): (method: string, protocol: string) => RequestSeries {
  const cache = new Map<string, RequestSeries>();
  return (method, protocol) => {
    const key = `${method} ${protocol}`;
    let series = cache.get(key);
    if (series === undefined) {
      const byCode = new Map<string, { inc(): void }>();
      series = {
        duration: metrics.requestDuration.labels({ method, protocol }),
        calls(code) {
          let counter = byCode.get(code);
          if (counter === undefined) {
            counter = metrics.requests.labels({ method, protocol, code });
            byCode.set(code, counter);
          }
          return counter;
        },
      };
      cache.set(key, series);
    }
    return series;
  };
}
