import type { Endpoint } from "../http/endpoint.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import type { OpenApiDocument } from "./openapi-document.js";

export interface OpenApiEndpointOptions {
  /** URL path the document is served at. Default "/openapi.json". */
  path?: string;
}

/**
 * `GET /openapi.json` (and HEAD): the document as `application/json`.
 * Serialized once, up front. Returns false for any other request, so the
 * caller passes it on (like createHealthEndpoints).
 */
export function createOpenApiEndpoint(
  document: OpenApiDocument,
  opts: OpenApiEndpointOptions = {},
): Endpoint {
  const path = opts.path ?? "/openapi.json";
  const body = Buffer.from(JSON.stringify(document), "utf8");
  const headers = {
    "content-type": "application/json",
    "content-length": String(body.byteLength),
    // Changes only with a deployment; clients may keep it but should revalidate.
    "cache-control": "no-cache",
  };
  const answer = (req: NodeServerRequest, res: NodeServerResponse): boolean => {
    if ((req.method !== "GET" && req.method !== "HEAD") || requestPath(req) !== path) {
      return false;
    }
    res.writeHead(200, headers);
    if (req.method === "HEAD") {
      res.end();
    } else {
      res.end(body);
    }
    return true;
  };
  return { answer };
}
