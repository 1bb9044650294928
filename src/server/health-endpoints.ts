import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import type { ReadinessProbe } from "./readiness.js";

function send(res: NodeServerResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * `GET /healthz` (liveness: 200 while the process serves) and `GET /readyz`
 * (200 while Redis answers, else 503). Returns false for any other request.
 */
export function createHealthEndpoints(ready: ReadinessProbe) {
  return (req: NodeServerRequest, res: NodeServerResponse) => {
    const path = req.url?.split("?")[0];
    if (req.method !== "GET" || (path !== "/healthz" && path !== "/readyz")) {
      return false;
    }
    if (path === "/healthz") {
      send(res, 200, { status: "ok" });
    } else {
      void ready().then((ok) => send(res, ok ? 200 : 503, { status: ok ? "ready" : "not ready" }));
    }
    return true;
  };
}
