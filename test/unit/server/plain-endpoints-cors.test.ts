import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createRouteTable } from "../../../src/rest/route-table.js";
import { attachExchange, Exchange } from "../../../src/server/exchange.js";
import { CORS_PREFLIGHT_METHOD, createCorsEndpoint } from "../../../src/server/plain-endpoints.js";

const APP = "https://app.example.com";

describe("the CORS endpoint", () => {
  const cors = createCorsEndpoint({
    origins: [APP],
    routes: createRouteTable(TokenService.methods),
    maxAgeSeconds: 120,
  });
  const exchanges: Exchange[] = [];
  let server: Server;
  let port = 0;

  before(async () => {
    server = createServer((req, res) => {
      const exchange = new Exchange("id", 0);
      exchanges.push(exchange);
      attachExchange(req, exchange);
      if (!cors.answer(req, res)) {
        res.writeHead(404);
        res.end("passed on");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** One request, with these headers (node's client sends Origin as given). */
  function ask(method: string, path: string, headers: Record<string, string> = {}) {
    return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on("error", reject);
        req.end();
      },
    );
  }

  const preflight = (origin: string) => ({
    origin,
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type",
  });

  it("labels its answers as preflights", () => {
    assert.equal(cors.label, CORS_PREFLIGHT_METHOD);
  });

  it("a listed origin's preflight on a REST path: 204 with what it may do there", async () => {
    const res = await ask("OPTIONS", "/user/tokens", preflight(APP));
    assert.equal(res.status, 204);
    assert.equal(res.headers["access-control-allow-origin"], APP);
    assert.deepEqual(String(res.headers["access-control-allow-methods"]).split(", ").sort(), [
      "DELETE",
      "GET",
      "POST",
    ]);
    assert.deepEqual(String(res.headers["access-control-allow-headers"]).split(", ").sort(), [
      "authorization",
      "content-type",
      "x-request-id",
    ]);
    assert.equal(res.headers["access-control-max-age"], "120");
    assert.equal(res.headers["access-control-allow-credentials"], undefined, "no credentials");
    assert.equal(res.headers.vary, "Origin");
  });

  it("an origin not listed: 403 in the service's error shape, nothing granted", async () => {
    exchanges.length = 0;
    const res = await ask("OPTIONS", "/user/tokens", preflight("https://evil.example"));
    assert.equal(res.status, 403);
    assert.equal(res.headers["access-control-allow-origin"], undefined);
    assert.equal(res.headers["access-control-allow-methods"], undefined);
    assert.equal(res.headers.vary, "Origin");
    assert.equal((JSON.parse(res.body) as { code: number }).code, Code.PermissionDenied);
    assert.equal(exchanges[0]?.code, Code.PermissionDenied);
  });

  it("a listed origin's request on a REST path goes on, granted its answer and the headers it may read", async () => {
    const res = await ask("GET", "/user/tokens?pageSize=1", { origin: APP });
    assert.equal(res.body, "passed on");
    assert.equal(res.headers["access-control-allow-origin"], APP);
    assert.deepEqual(String(res.headers["access-control-expose-headers"]).split(", ").sort(), [
      "retry-after",
      "www-authenticate",
      "x-request-id",
    ]);
    assert.equal(res.headers.vary, "Origin");
  });

  it("any other request on a REST path goes on ungranted, varying by Origin", async () => {
    const unlisted: Record<string, string>[] = [{ origin: "https://evil.example" }, {}];
    for (const headers of unlisted) {
      const res = await ask("POST", "/user/tokens", headers);
      assert.equal(res.body, "passed on");
      assert.equal(res.headers["access-control-allow-origin"], undefined);
      assert.equal(res.headers.vary, "Origin");
    }
    // OPTIONS without Access-Control-Request-Method is no preflight.
    const options = await ask("OPTIONS", "/user/tokens", { origin: APP });
    assert.equal(options.body, "passed on");
  });

  it("leaves other paths untouched", async () => {
    const res = await ask("OPTIONS", "/healthz", preflight(APP));
    assert.equal(res.body, "passed on");
    assert.equal(res.headers.vary, undefined);
    assert.equal(res.headers["access-control-allow-origin"], undefined);
  });
});
