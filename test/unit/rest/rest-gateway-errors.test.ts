import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { httpStatusFromCode } from "@perps/token-client/protocol";
import {
  call,
  maxBodyBytes,
  rawPost,
  restGatewaySuite,
  sendJson,
  status,
} from "../../support/rest-gateway-server.js";

restGatewaySuite();

describe("strict JSON body over HTTP", () => {
  const cases: [string, string, string][] = [
    [
      "integer as string",
      '{"int64Value":"1700000000000"}',
      "int64Value: must be an integer JSON number",
    ],
    ["fraction", '{"int64Value":1.5}', "int64Value: must be an integer JSON number"],
    ["1e400", '{"int64Value":1e400}', "int64Value: must be an integer JSON number"],
    [
      "beyond 2^53-1",
      '{"int64Value":9007199254740992}',
      "int64Value: must be an integer JSON number from -9007199254740991 to 9007199254740991",
    ],
    ["invalid JSON", "{", "request body is not valid JSON"],
    ["empty body", "", "request body is not valid JSON"],
    ["array", "[]", "request body must be a JSON object"],
    ["string", '"x"', "request body must be a JSON object"],
    ["null", "null", "request body must be a JSON object"],
    ["nested", '{"item":{"quantity":"1"}}', "item.quantity: must be an integer JSON number"],
  ];
  for (const [name, body, message] of cases) {
    it(`400 for ${name}`, async () => {
      const r = await sendJson("POST", "/v1/fail", body);
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, status(3, message));
    });
  }

  it("ignores __proto__ and constructor keys; the last duplicate key wins", async () => {
    const body = '{"__proto__":{"shelf":"evil"},"constructor":1,"shelf":"a","shelf":"b"}';
    const r = await sendJson("PUT", "/v1/shelves/s/items/i", body);
    assert.equal(r.status, 200);
    assert.deepEqual((r.body as { request: unknown }).request, { shelf: "s", item: { id: "i" } });
    const echoShelf = await sendJson("POST", "/v1/projects/p/resources/r:fetch", body);
    assert.equal((echoShelf.body as { request: { shelf: string } }).request.shelf, "b");
    assert.equal(({} as Record<string, unknown>).shelf, undefined);
  });
});

describe("errors", () => {
  const codes = [
    Code.InvalidArgument,
    Code.Unauthenticated,
    Code.PermissionDenied,
    Code.NotFound,
    Code.AlreadyExists,
    Code.ResourceExhausted,
    Code.FailedPrecondition,
    Code.Unavailable,
    Code.Internal,
  ];
  for (const code of codes) {
    it(`handler error ${Code[code]} → ${httpStatusFromCode(code)}, message unchanged`, async () => {
      const r = await sendJson("POST", "/v1/fail", {
        failCode: code,
        failMessage: "Signature expired",
      });
      assert.equal(r.status, httpStatusFromCode(code));
      assert.deepEqual(r.body, status(code, "Signature expired"));
      assert.equal(r.headers.get("content-type"), "application/json");
    });
  }

  it("never leaks the text of an unexpected exception", async () => {
    const r = await sendJson("POST", "/v1/fail", { failCode: 0 });
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, status(Code.Internal, "internal error"));
  });

  it("404 for an unknown path", async () => {
    const r = await call("/nope");
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, status(Code.NotFound, "no such resource"));
  });

  it("405 with Allow for a known path and another method", async () => {
    const r = await call("/v1/shelves/s/items/i", { method: "POST" });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "DELETE, GET, PATCH, PUT");
    assert.deepEqual(r.body, status(Code.Unimplemented, "method POST is not allowed here"));
  });

  it("415 for a body that is not application/json", async () => {
    const textPlain = await sendJson("POST", "/v1/fail", "{}", { "content-type": "text/plain" });
    assert.equal(textPlain.status, 415);
    assert.deepEqual(textPlain.body, status(3, "content-type must be application/json"));
    const latin1 = await sendJson("POST", "/v1/fail", "{}", {
      "content-type": "application/json; charset=latin1",
    });
    assert.equal(latin1.status, 415);
    const none = await call("/v1/fail", { method: "POST", body: new Uint8Array([123, 125]) });
    assert.equal(none.status, 415);
  });

  it("accepts application/json with charset=utf-8", async () => {
    const r = await sendJson("POST", "/v1/shelves/s/tags", ["a"], {
      "content-type": "Application/JSON; charset=UTF-8",
    });
    assert.equal(r.status, 200);
  });

  it("413 early for a content-length over the limit", async () => {
    const r = await sendJson("POST", "/v1/fail", { failMessage: "x".repeat(maxBodyBytes) });
    assert.equal(r.status, 413);
    assert.deepEqual(r.body, status(3, `request body is larger than ${maxBodyBytes} bytes`));
  });

  it("413 while reading a chunked body over the limit, and the connection stays usable", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await rawPost(agent, "x".repeat(maxBodyBytes * 8));
      assert.equal(first.status, 413);
      assert.deepEqual(
        JSON.parse(first.body),
        status(3, `request body is larger than ${maxBodyBytes} bytes`),
      );
      const second = await rawPost(agent, JSON.stringify(["ok"]));
      assert.equal(second.status, 200);
    } finally {
      agent.destroy();
    }
  });
});
