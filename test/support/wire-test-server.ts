import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import {
  createDualProtocolServer,
  type DualProtocolServer,
  type DualProtocolServerOptions,
} from "../../src/server/dual-protocol-server.js";
import { createConnectHandler } from "../../src/server/wire/connect-handler.js";
import { LISTENER_LIMITS } from "./store-settings.js";

// The wire paths (src/server/wire/) served for a unit test, without the rest of the app.

/** The wire paths' handler of a test's routes: no interceptors, a bare 404 for any other path. */
export function wireHandler(routes: (router: ConnectRouter) => void, readMaxBytes: number) {
  return createConnectHandler({
    routes,
    interceptors: [],
    readMaxBytes,
    fallback: (_req, res) => {
      res.writeHead(404);
      res.end();
    },
    contextValues: () => createContextValues(),
  });
}

/** A dual-protocol server of `handler`, listening on a free port of 127.0.0.1. */
export async function listeningServer(
  handler: DualProtocolServerOptions["handler"],
): Promise<DualProtocolServer> {
  const server = createDualProtocolServer({
    ...LISTENER_LIMITS,
    host: "127.0.0.1",
    port: 0,
    handler,
  });
  await server.listen();
  return server;
}
