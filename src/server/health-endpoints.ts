import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import type { ReadinessProbe } from "./readiness.js";

function send(req: NodeServerRequest, res: NodeServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  // HEAD: the same status and headers, no body (balancers that probe with HEAD).
  res.end(req.method === "HEAD" ? "" : text);
}

/**
 * `GET /healthz` (liveness: 200 while the process serves) and `GET /readyz`
 * (200 while Redis answers and the service is not stopping, else 503), and
 * HEAD of both. Returns false for any other request (other methods are
 * answered 405 by the listener's method guard).
 */
export function createHealthEndpoints(ready: ReadinessProbe): Endpoint {
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return false;
    }
    const path = requestPath(req);
    if (path === "/healthz") {
      send(req, res, 200, { status: "ok" });
      return true;
    }
    if (path === "/readyz") {
      void ready().then((ok) =>
        send(req, res, ok ? 200 : 503, { status: ok ? "ready" : "not ready" }),
      );
      return true;
    }
    return false;
  };
  return { answer, probe: true };
}
