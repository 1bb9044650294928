import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import type { ServiceMetrics } from "./service-metrics.js";

/**
 * `GET /metrics` (and HEAD) in the Prometheus text format; returns false for any other
 * request. `text` gives the exposition (default: this process's registry; a
 * worker passes the whole service's, from `clusterMetricsSource`).
 */
export function createMetricsEndpoint(
  metrics: ServiceMetrics,
  text: () => Promise<string> = () => metrics.registry.metrics(),
): Endpoint {
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if ((req.method !== "GET" && req.method !== "HEAD") || requestPath(req) !== "/metrics") {
      return false;
    }
    text().then(
      (text) => {
        res.writeHead(200, {
          "content-type": metrics.registry.contentType,
          "content-length": Buffer.byteLength(text),
        });
        res.end(req.method === "HEAD" ? "" : text);
      },
      () => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("metrics unavailable\n");
      },
    );
    return true;
  };
  return { answer };
}
