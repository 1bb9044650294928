import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createTokenApiOpenApiDocument } from "../../../scripts/openapi/token-api-document.js";
import { createOpenApiEndpoint } from "../../../src/openapi/openapi-endpoint.js";

describe("createOpenApiEndpoint", () => {
  const document = createTokenApiOpenApiDocument();
  let server: Server;
  let base: string;

  before(async () => {
    const endpoint = createOpenApiEndpoint(document);
    // Like the app: the endpoint first, anything else after it.
    server = createServer((req, res) => {
      if (!endpoint.answer(req, res)) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("fallback");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("GET /openapi.json → 200 application/json, the document", async () => {
    const res = await fetch(`${base}/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(document)));
  });

  it("ignores the query string", async () => {
    const res = await fetch(`${base}/openapi.json?v=1`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  });

  it("HEAD → 200 with the length and no body", async () => {
    const { status, length, body } = await new Promise<{
      status: number;
      length: string | undefined;
      body: string;
    }>((resolve, reject) => {
      const req = request(`${base}/openapi.json`, { method: "HEAD" }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            length: res.headers["content-length"],
            body: text,
          }),
        );
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 200);
    assert.equal(length, String(Buffer.byteLength(JSON.stringify(document))));
    assert.equal(body, "");
  });

  it("leaves other methods and paths to the next handler", async () => {
    for (const [method, path] of [
      ["POST", "/openapi.json"],
      ["DELETE", "/openapi.json"],
      ["GET", "/openapi.json/x"],
      ["GET", "/openapi"],
      ["GET", "/"],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(await res.text(), "fallback");
    }
  });

  it("serves at another path when told", async () => {
    const endpoint = createOpenApiEndpoint(document, { path: "/v1/openapi.json" });
    const other = createServer((req, res) => {
      if (!endpoint.answer(req, res)) {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      assert.equal((await fetch(`${url}/v1/openapi.json`)).status, 200);
      assert.equal((await fetch(`${url}/openapi.json`)).status, 404);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
