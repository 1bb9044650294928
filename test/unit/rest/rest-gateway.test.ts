import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  Code,
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
import { httpStatusFromCode } from "@perps/token-client/protocol";
import { createRestGateway } from "../../../src/rest/rest-gateway.js";
import {
  type EchoRequest,
  EchoResponseSchema,
  GatewayTestService,
} from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

const maxBodyBytes = 1024;

function echo(rpc: string, request: EchoRequest) {
  return create(EchoResponseSchema, { rpc, request, item: request.item });
}

// Proves REST calls run through the same interceptors as Connect calls, with
// the client's headers.
const tagResponse: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-procedure", req.method.name);
  res.header.set("x-seen-test-header", req.header.get("x-test") ?? "");
  return res;
};

const gatewayTestImpl: ServiceImpl<typeof GatewayTestService> = {
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

const tokenImpl: ServiceImpl<typeof TokenService> = {
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

function routes(router: ConnectRouter): void {
  router.service(GatewayTestService, gatewayTestImpl);
  router.service(TokenService, tokenImpl);
}

/** Same wiring as production: the same implementations and interceptors for Connect and REST. */
function createHandler() {
  const interceptors = [tagResponse];
  const gateway = createRestGateway({
    services: [
      createServiceImplSpec<typeof GatewayTestService>(GatewayTestService, gatewayTestImpl),
      createServiceImplSpec<typeof TokenService>(TokenService, tokenImpl),
    ],
    interceptors,
    maxBodyBytes,
  });
  return connectNodeAdapter({ interceptors, routes, fallback: gateway.handle });
}

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

let base = "";
const server = http.createServer(createHandler());

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function call(path: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(base + path, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

function sendJson(
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

function status(code: number, message: string) {
  return { code, message, details: [] };
}

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

/** POST to AddTags with a chunked body (no content-length). */
function rawPost(agent: http.Agent, body: string): Promise<{ status: number; body: string }> {
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
