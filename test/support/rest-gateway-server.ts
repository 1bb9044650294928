import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  ConnectError,
  type ConnectRouter,
  createServiceImplSpec,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  CreateTokenResponseSchema,
  DeleteTokenResponseSchema,
  ListTokensResponseSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createUnaryInvoker } from "../../src/call/unary-invoker.js";
import { createRestGateway } from "../../src/rest/rest-gateway.js";
import {
  type EchoRequest,
  EchoResponseSchema,
  GatewayTestService,
} from "../gen/perps/gatewaytest/v1/gateway_test_pb.js";

// The REST gateway, wired as in production, in front of test services
// (rest-gateway*.test.ts).

export const maxBodyBytes = 1024;

export function echo(rpc: string, request: EchoRequest) {
  return create(EchoResponseSchema, { rpc, request, item: request.item });
}

// Proves REST calls run through the same interceptors as Connect calls, with
// the client's headers.
export const tagResponse: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-procedure", req.method.name);
  res.header.set("x-seen-test-header", req.header.get("x-test") ?? "");
  return res;
};

export const gatewayTestImpl: ServiceImpl<typeof GatewayTestService> = {
  getItem: (req) => echo("GetItem", req),
  getResource: (req) => echo("GetResource", req),
  getFile: (req) => echo("GetFile", req),
  listAny: (req) => echo("ListAny", req),
  cancelItem: (req) => echo("CancelItem", req),
  updateItem: (req) => echo("UpdateItem", req),
  replaceItem: (req) => echo("ReplaceItem", req),
  deleteItem: (req) => echo("DeleteItem", req),
  linkItem: (req) => echo("LinkItem", req),
  getItemOnly: (req) => echo("GetItemOnly", req),
  addTags: (req) => echo("AddTags", req),
  fail: (req) => {
    if (req.failCode === 0) {
      throw new Error("password=hunter2 at db.ts:42");
    }
    throw new ConnectError(req.failMessage, req.failCode);
  },
  hidden: (req) => echo("Hidden", req),
};

export const tokenImpl: ServiceImpl<typeof TokenService> = {
  createToken: (req) =>
    create(CreateTokenResponseSchema, {
      expiresAt: "2030-01-01",
      id: `id-${req.timestamp}`,
      token: "secret",
    }),
  deleteToken: () => create(DeleteTokenResponseSchema),
  // No token listed, so the body shows how an empty list is written; the
  // Authorization header the handler saw comes back in a response header.
  listTokens: (_req, ctx) => {
    ctx.responseHeader.set("x-seen-authorization", ctx.requestHeader.get("authorization") ?? "");
    return create(ListTokensResponseSchema);
  },
};

export function routes(router: ConnectRouter): void {
  router.service(GatewayTestService, gatewayTestImpl);
  router.service(TokenService, tokenImpl);
}

/** Same wiring as production: the same implementations and interceptors for Connect and REST. */
export function createHandler() {
  const interceptors = [tagResponse];
  const services = [
    createServiceImplSpec<typeof GatewayTestService>(GatewayTestService, gatewayTestImpl),
    createServiceImplSpec<typeof TokenService>(TokenService, tokenImpl),
  ];
  const gateway = createRestGateway({
    services,
    invoker: createUnaryInvoker({ services, interceptors }),
    maxBodyBytes,
  });
  return connectNodeAdapter({ interceptors, routes, fallback: gateway.handle });
}

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

let base = "";

/**
 * Serves the gateway (createHandler) over HTTP/1.1 on a free port for the tests
 * of the calling file; call it at the top level of the file (or in a describe).
 */
export function restGatewaySuite(): void {
  const server = http.createServer(createHandler());

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
}

export async function call(path: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(base + path, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

export function sendJson(
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return call(path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export function status(code: number, message: string) {
  return { code, message, details: [] };
}

/** POST to AddTags with a chunked body (no content-length). */
export function rawPost(
  agent: http.Agent,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/shelves/s/tags`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json" },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    for (let i = 0; i < body.length; i += 512) {
      req.write(body.slice(i, i + 512));
    }
    req.end();
  });
}
