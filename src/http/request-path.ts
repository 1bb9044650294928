import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

const PATH = Symbol("path");

type Carrier = (IncomingMessage | Http2ServerRequest) & { [PATH]?: string };

/**
 * The request target without its query, worked out once per request: the
 * listener's endpoints, the REST gateway and the Connect routes all ask for
 * it in turn, and each gets the same string.
 */
export function requestPath(req: IncomingMessage | Http2ServerRequest): string {
  const carrier = req as Carrier;
  let path = carrier[PATH];
  if (path === undefined) {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    path = q < 0 ? url : url.slice(0, q);
    carrier[PATH] = path;
  }
  return path;
}
