import type * as ConnectNode from "@connectrpc/connect-node";
import type { TransportHandle } from "./lazy-transport.js";
import { TransportUnavailableError } from "./transport-unavailable-error.js";

// An optional peer dependency: only gRPC users install it, so a bot on "rest"
// or "connect" gets no HTTP/2 server stack. Deliberately not a string literal:
// bundlers (webpack, Vite, esbuild) follow `import("literal")` into a chunk,
// which would drag node:http2 into a browser build of the SDK. The magic
// comments below say the same to webpack and Vite.
const CONNECT_NODE: string = "@connectrpc/connect-node";

/** True in Node.js (and runtimes that emulate it, such as Bun and Deno), where HTTP/2 is available. */
export function hasNodeHttp2(): boolean {
  const runtime = globalThis as { process?: { versions?: { node?: unknown } } };
  return typeof runtime.process?.versions?.node === "string";
}

/**
 * The gRPC transport (HTTP/2, cleartext with prior knowledge on http:// URLs),
 * loaded on first use so that the browser path of the SDK never imports
 * @connectrpc/connect-node.
 */
export async function openGrpcTransport(baseUrl: string): Promise<TransportHandle> {
  if (!hasNodeHttp2()) {
    throw new TransportUnavailableError(
      'transport "grpc" needs HTTP/2 and works in Node.js only; use "connect" or "rest" in a browser',
    );
  }
  const connectNode = (await import(
    /* webpackIgnore: true */ /* @vite-ignore */ CONNECT_NODE
  ).catch((err: unknown) => {
    throw isModuleMissing(err)
      ? new TransportUnavailableError(
          `transport "grpc" needs the package ${CONNECT_NODE} (an optional peer dependency): npm install ${CONNECT_NODE}@2`,
          { cause: err },
        )
      : err;
  })) as typeof ConnectNode;
  // Our own session manager, so close() can end the HTTP/2 connection now
  // rather than after connect-node's 15-minute idle timeout.
  const sessionManager = new connectNode.Http2SessionManager(baseUrl);
  return {
    transport: connectNode.createGrpcTransport({ baseUrl, sessionManager }),
    close: () => sessionManager.abort(),
  };
}

/** True for the error of an import whose package is not installed. */
function isModuleMissing(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}
