import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  ListTokensResponseSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { transcodeResponse } from "../../../src/rest/rest-gateway.js";
import { type RestRoute, restRoutesOfService } from "../../../src/rest/rest-route.js";
import {
  EchoRequestSchema,
  EchoResponseSchema,
  GatewayTestService,
} from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

function routeOf(routes: RestRoute[], method: string): RestRoute {
  const route = routes.find((r) => r.method.name === method);
  assert.ok(route, method);
  return route;
}

const listRoute = routeOf(restRoutesOfService(TokenService), "ListTokens");
const gatewayRoutes = restRoutesOfService(GatewayTestService);
const getItem = routeOf(gatewayRoutes, "GetItem");
const getItemOnly = routeOf(gatewayRoutes, "GetItemOnly");

describe("transcodeResponse of the whole message", () => {
  it("writes protobuf JSON: camelCase names, 64-bit integers as strings, defaults left out", () => {
    const message = create(EchoResponseSchema, {
      rpc: "GetItem",
      request: { shelf: "s1", int64Value: 9007199254740993n, boolValue: false },
      item: { id: "", quantity: 0n },
    });
    assert.deepEqual(transcodeResponse(getItem, message), {
      rpc: "GetItem",
      request: { shelf: "s1", int64Value: "9007199254740993" },
      item: {},
    });
  });

  it("always writes the message's own lists, [] when empty", () => {
    assert.deepEqual(transcodeResponse(listRoute, create(ListTokensResponseSchema)), {
      tokens: [],
    });
    const page = create(ListTokensResponseSchema, {
      tokens: [{ id: "i1", name: "bot", expiresAt: "2026-12-01" }],
      nextPageToken: "p2",
    });
    assert.deepEqual(transcodeResponse(listRoute, page), {
      tokens: [{ id: "i1", name: "bot", expiresAt: "2026-12-01" }],
      nextPageToken: "p2",
    });
  });

  it("writes empty maps as {} at the top, and leaves nested empty lists out", () => {
    // No checked-in method answers a message with a map: route one to EchoRequest.
    const route: RestRoute = {
      ...getItem,
      method: { ...getItem.method, output: EchoRequestSchema },
    };
    const json = transcodeResponse(route, create(EchoRequestSchema, { item: { id: "a" } }));
    assert.deepEqual(json, {
      item: { id: "a" },
      tags: [],
      numbers: [],
      counts: {},
      labels: {},
      items: [],
    });
  });
});

describe("transcodeResponse of response_body", () => {
  it("writes only the message field, {} when it is unset", () => {
    const message = create(EchoResponseSchema, {
      rpc: "GetItemOnly",
      item: { id: "a", quantity: 3n },
    });
    assert.deepEqual(transcodeResponse(getItemOnly, message), { id: "a", quantity: "3" });
    assert.deepEqual(transcodeResponse(getItemOnly, create(EchoResponseSchema, { rpc: "x" })), {});
  });

  it('writes a list or scalar field with its default when unset: [], ""', () => {
    const tokens = { ...listRoute, responseBody: ListTokensResponseSchema.field.tokens };
    const next = { ...listRoute, responseBody: ListTokensResponseSchema.field.nextPageToken };
    const empty = create(ListTokensResponseSchema);
    assert.deepEqual(transcodeResponse(tokens, empty), []);
    assert.equal(transcodeResponse(next, empty), "");
    const page = create(ListTokensResponseSchema, {
      tokens: [{ id: "i1", name: "bot", expiresAt: "2026-12-01" }],
      nextPageToken: "p2",
    });
    assert.deepEqual(transcodeResponse(tokens, page), [
      { id: "i1", name: "bot", expiresAt: "2026-12-01" },
    ]);
    assert.equal(transcodeResponse(next, page), "p2");
  });

  it("leaves the defaults inside a listed message out, as the whole message's JSON does", () => {
    const tokens = { ...listRoute, responseBody: ListTokensResponseSchema.field.tokens };
    const page = create(ListTokensResponseSchema, {
      tokens: [{ id: "i1" }, { id: "i2", name: "bot" }],
    });
    assert.deepEqual(transcodeResponse(tokens, page), [{ id: "i1" }, { id: "i2", name: "bot" }]);
    assert.deepEqual(transcodeResponse(listRoute, page), {
      tokens: [{ id: "i1" }, { id: "i2", name: "bot" }],
    });
  });
});
