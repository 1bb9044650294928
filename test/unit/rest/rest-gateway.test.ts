import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { call, restGatewaySuite, sendJson, status } from "../../support/rest-gateway-server.js";

restGatewaySuite();

describe("path templates", () => {
  it("binds simple and nested path variables, fully decoding a single segment", async () => {
    const r = await call("/v1/shelves/s%201/items/a%2Fb");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      rpc: "GetItem",
      request: { shelf: "s 1", item: { id: "a/b" } },
      item: { id: "a/b" },
    });
    assert.equal(r.headers.get("content-type"), "application/json");
  });

  it("binds {var=segments/*}, keeping %2F encoded in a multi-segment variable", async () => {
    const r = await call("/v1/projects/p%201/resources/r%2F2");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      rpc: "GetResource",
      request: { name: "projects/p 1/resources/r%2F2" },
    });
  });

  it("does not match a {var=segments/*} variable with other literals", async () => {
    const r = await call("/v1/projects/p/other/r");
    assert.equal(r.status, 404);
  });

  it("binds ** to the rest of the path, including none", async () => {
    const deep = await call("/v1/files/a/b%2Fc/d.txt");
    assert.deepEqual(deep.body, { rpc: "GetFile", request: { path: "a/b%2Fc/d.txt" } });
    const none = await call("/v1/files");
    assert.deepEqual(none.body, { rpc: "GetFile", request: {} });
  });

  it("matches an anonymous * segment without binding it", async () => {
    const r = await call("/v1/any/whatever/items");
    assert.deepEqual(r.body, { rpc: "ListAny", request: {} });
    assert.equal((await call("/v1/any/items")).status, 404);
  });

  it("routes a custom verb suffix", async () => {
    const r = await sendJson("POST", "/v1/shelves/s/items/i:cancel", {});
    assert.equal(r.status, 202);
    assert.equal((r.body as { rpc: string }).rpc, "CancelItem");
    assert.deepEqual((r.body as { request: unknown }).request, { shelf: "s", item: { id: "i" } });
  });

  it("answers 400 for malformed percent-encoding in a variable", async () => {
    const r = await call("/v1/shelves/%E0%A4%A/items/i");
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, status(3, "shelf: invalid percent-encoding in the URL path"));
  });
});

describe("HTTP verbs and bodies", () => {
  it('body "*": all fields from the body, path variables win', async () => {
    const r = await sendJson("PUT", "/v1/shelves/s/items/i", {
      shelf: "from-body",
      name: "n",
      item: { id: "body-id", title: "T", quantity: 7 },
      int64Value: 9007199254740991,
      unknownField: { ignored: true },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      rpc: "ReplaceItem",
      request: {
        shelf: "s",
        name: "n",
        item: { id: "i", title: "T", quantity: "7" },
        int64Value: "9007199254740991",
      },
      item: { id: "i", title: "T", quantity: "7" },
    });
  });

  it('body "*" takes no query parameters', async () => {
    const r = await sendJson("PUT", "/v1/shelves/s/items/i?name=q", {});
    assert.deepEqual((r.body as { request: unknown }).request, { shelf: "s", item: { id: "i" } });
  });

  it('body "<field>": the body is that field; other fields come from the query', async () => {
    const r = await sendJson("PATCH", "/v1/shelves/s/items/i?name=q&item.title=ignored", {
      title: "T",
      quantity: 5,
    });
    assert.equal(r.status, 200);
    assert.deepEqual((r.body as { request: unknown }).request, {
      shelf: "s",
      name: "q",
      item: { id: "i", title: "T", quantity: "5" },
    });
  });

  it('body "<field>" of a message must be a JSON object named by the field', async () => {
    const r = await sendJson("PATCH", "/v1/shelves/s/items/i", [1]);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, status(3, "item: must be a JSON object"));
  });

  it('body "<field>" of a repeated field is a JSON array', async () => {
    const ok = await sendJson("POST", "/v1/shelves/s/tags", ["a", "b"]);
    assert.deepEqual(ok.body, { rpc: "AddTags", request: { shelf: "s", tags: ["a", "b"] } });
    const bad = await sendJson("POST", "/v1/shelves/s/tags", ["a", 1]);
    assert.deepEqual(bad.body, status(3, "tags[1]: must be a JSON string"));
  });

  it("DELETE without a body rule needs no body and no content type", async () => {
    const r = await call("/v1/shelves/s/items/i", { method: "DELETE" });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      rpc: "DeleteItem",
      request: { shelf: "s", item: { id: "i" } },
      item: { id: "i" },
    });
  });

  it("custom HTTP method", async () => {
    const r = await call("/v1/links/s", { method: "LINK" });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { rpc: "LinkItem", request: { shelf: "s" } });
  });

  it("response_body: only that field of the response", async () => {
    const r = await call("/v1/items/abc");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { id: "abc" });
  });

  it("additional_bindings: each with its own verb, path and body", async () => {
    const a = await call("/v1/shelves/s9/resource");
    assert.deepEqual(a.body, { rpc: "GetResource", request: { shelf: "s9" } });
    const b = await sendJson("POST", "/v1/projects/p/resources/r:fetch", { shelf: "x" });
    assert.equal(b.status, 200);
    assert.deepEqual(b.body, {
      rpc: "GetResource",
      request: { shelf: "x", name: "projects/p/resources/r" },
    });
  });

  it("a method without an http rule is not a REST route, but stays a Connect RPC", async () => {
    const rest = await call("/v1/hidden");
    assert.equal(rest.status, 404);
    const connect = await sendJson("POST", "/perps.gatewaytest.v1.GatewayTestService/Hidden", {});
    assert.equal(connect.status, 200);
    assert.deepEqual(connect.body, { rpc: "Hidden", request: {} });
  });
});

describe("query parameters", () => {
  it("bind scalars, enums, bytes, repeated and nested fields by JSON or proto name", async () => {
    const q = new URLSearchParams([
      ["int64Value", "-9223372036854775808"],
      ["uint64_value", "18446744073709551615"],
      ["int32Value", "-5"],
      ["boolValue", "true"],
      ["doubleValue", "1.5e3"],
      ["color", "COLOR_RED"],
      ["note", "a b&c"],
      ["data", "AQID"],
      ["tags", "x"],
      ["tags", "y"],
      ["numbers", "1"],
      ["numbers", "2"],
      ["item.title", "T"],
      ["item.label.text", "L"],
      ["item.label.codes", "3"],
      ["item.label.codes", "4"],
      ["choiceNumber", "7"],
      ["no.such.field", "ignored"],
    ]);
    const r = await call(`/v1/shelves/s/items/i?${q}`);
    assert.equal(r.status, 200);
    assert.deepEqual((r.body as { request: unknown }).request, {
      shelf: "s",
      item: { id: "i", title: "T", label: { text: "L", codes: [3, 4] } },
      int64Value: "-9223372036854775808",
      uint64Value: "18446744073709551615",
      int32Value: -5,
      boolValue: true,
      doubleValue: 1500,
      color: "COLOR_RED",
      note: "a b&c",
      data: "AQID",
      tags: ["x", "y"],
      numbers: ["1", "2"],
      choiceNumber: 7,
    });
  });

  const bad: [string, string][] = [
    ["int32Value=abc", "int32Value: must be an integer from -2147483648 to 2147483647"],
    ["int32Value=2147483648", "int32Value: must be an integer from -2147483648 to 2147483647"],
    ["uint32Value=-1", "uint32Value: must be an integer from 0 to 4294967295"],
    ["boolValue=yes", "boolValue: must be true or false"],
    ["color=PURPLE", "color: must be one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN"],
    ["name=a&name=b", "name: must be given once"],
    ["item=x", "item: cannot be set from a URL"],
    ["items.id=x", "items.id: cannot be set from a URL"],
    ["choiceText=a&choiceNumber=1", "choiceNumber: only one of the fields of choice may be set"],
  ];
  for (const [query, message] of bad) {
    it(`400 for ${query}`, async () => {
      const r = await call(`/v1/shelves/s/items/i?${query}`);
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, status(3, message));
    });
  }
});
