import { Code } from "@connectrpc/connect";
import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import { refuseWithStatus } from "./status-refusal.js";

export interface MethodGuardOptions {
  /** Paths of the plain endpoints served (the query is ignored). */
  paths: readonly string[];
  /** The methods they answer. Default GET and HEAD. */
  allow?: readonly string[];
}

/**
 * The 405 of the plain endpoints (`/healthz`, `/metrics`...): a request to
 * one of `paths` with a method they do not serve is answered 405 with
 * `Allow`, in the service's error shape (as the REST gateway answers a method
 * its routes do not serve); returns false for any other request. Put after
 * the endpoints themselves.
 */
export function createMethodGuard(opts: MethodGuardOptions): Endpoint {
  const paths = new Set(opts.paths);
  const allowed = opts.allow ?? ["GET", "HEAD"];
  const allow = allowed.join(", ");
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    const method = req.method ?? "";
    if (allowed.includes(method) || !paths.has(requestPath(req))) {
      return false;
    }
    const message = `method ${method} is not allowed here`;
    return refuseWithStatus(req, res, {
      status: 405,
      code: Code.Unimplemented,
      message,
      headers: { allow, "cache-control": "no-store" },
    });
  };
  return { answer };
}
