import assert from "node:assert/strict";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  call,
  createHandler,
  maxBodyBytes,
  type Reply,
  restGatewaySuite,
  sendJson,
  status,
} from "../../support/rest-gateway-server.js";

restGatewaySuite();

describe("interceptors and headers", () => {
  it("runs the router's interceptors and forwards request and response headers", async () => {
    const r = await call("/v1/items/abc", { headers: { "x-test": "hello" } });
    assert.equal(r.headers.get("x-procedure"), "GetItemOnly");
    assert.equal(r.headers.get("x-seen-test-header"), "hello");
  });
});

describe("TokenService over REST", () => {
  const body = { signature: "ab", timestamp: 1700000000000, userId: "u" };

  it("POST /user/tokens answers 201 (http_success_status)", async () => {
    const r = await sendJson("POST", "/user/tokens", body);
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, { expiresAt: "2030-01-01", id: "id-1700000000000", token: "secret" });
  });

  it("DELETE /user/tokens with a JSON body answers 200 {}", async () => {
    const r = await sendJson("DELETE", "/user/tokens", { ...body, tokenId: "t" });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {});
  });

  it("rejects a timestamp given as a string", async () => {
    const r = await sendJson("POST", "/user/tokens", { ...body, timestamp: "1700000000000" });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, status(3, "timestamp: must be an integer JSON number"));
  });

  it("GET /user/tokens passes the Authorization header to the call and always writes the list", async () => {
    const r = await call("/user/tokens", { headers: { authorization: "Bearer pt_x" } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { tokens: [] });
    assert.equal(r.headers.get("x-seen-authorization"), "Bearer pt_x");
  });

  it("405 for PUT /user/tokens", async () => {
    const r = await sendJson("PUT", "/user/tokens", body);
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "DELETE, GET, POST");
  });
});

describe("HTTP/2 (h2c)", () => {
  const h2server = http2.createServer(createHandler());
  let session: http2.ClientHttp2Session;

  before(async () => {
    await new Promise<void>((resolve) => h2server.listen(0, "127.0.0.1", resolve));
    session = http2.connect(`http://127.0.0.1:${(h2server.address() as AddressInfo).port}`);
  });

  after(async () => {
    await new Promise<void>((resolve) => session.close(() => resolve()));
    await new Promise((resolve) => h2server.close(resolve));
  });

  function h2call(headers: http2.OutgoingHttpHeaders, body?: string): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const stream = session.request(headers);
      let responseHeaders: http2.IncomingHttpHeaders = {};
      let text = "";
      stream.setEncoding("utf8");
      stream.on("response", (h) => {
        responseHeaders = h;
      });
      stream.on("data", (chunk: string) => {
        text += chunk;
      });
      stream.on("end", () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(responseHeaders)) {
          if (!k.startsWith(":") && typeof v === "string") headers.set(k, v);
        }
        resolve({ status: Number(responseHeaders[":status"]), headers, body: JSON.parse(text) });
      });
      stream.on("error", reject);
      stream.end(body);
    });
  }

  it("serves a POST with a JSON body", async () => {
    const r = await h2call(
      { ":method": "POST", ":path": "/user/tokens", "content-type": "application/json" },
      JSON.stringify({ signature: "ab", timestamp: 1, userId: "u" }),
    );
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, { expiresAt: "2030-01-01", id: "id-1", token: "secret" });
  });

  it("serves a GET and maps errors", async () => {
    const ok = await h2call({ ":method": "GET", ":path": "/v1/items/x" });
    assert.deepEqual(ok.body, { id: "x" });
    const fail = await h2call(
      { ":method": "POST", ":path": "/v1/fail", "content-type": "application/json" },
      JSON.stringify({ failCode: Code.Unauthenticated, failMessage: "Signature expired" }),
    );
    assert.equal(fail.status, 401);
    assert.deepEqual(fail.body, status(Code.Unauthenticated, "Signature expired"));
    const big = await h2call(
      { ":method": "POST", ":path": "/v1/fail", "content-type": "application/json" },
      "x".repeat(maxBodyBytes * 4),
    );
    assert.equal(big.status, 413);
  });
});
