import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type } from "@bufbuild/protobuf/wkt";
import { createServiceImplSpec } from "@connectrpc/connect";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createUnaryInvoker } from "../../../src/call/unary-invoker.js";
import { createRestGateway } from "../../../src/rest/rest-gateway.js";
import { restRoutesOfService } from "../../../src/rest/rest-route.js";
import { GatewayTestService } from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";
import {
  type RuleInit,
  type RunTimeMethod,
  runTimeService,
} from "../../support/run-time-service.js";

/**
 * A service built at run time, for rules the checked-in protos must not
 * contain. Request `t.Req` has `name` (string), `item` (t.Item with `id`)
 * and `tags` (repeated string).
 */
function serviceOf(methods: RunTimeMethod[]): DescService {
  const string = FieldDescriptorProto_Type.STRING;
  const optional = FieldDescriptorProto_Label.OPTIONAL;
  return runTimeService(methods, [
    {
      name: "Req",
      field: [
        { name: "name", number: 1, type: string, label: optional, jsonName: "name" },
        {
          name: "item",
          number: 2,
          type: FieldDescriptorProto_Type.MESSAGE,
          typeName: ".t.Item",
          label: optional,
          jsonName: "item",
        },
        {
          name: "tags",
          number: 3,
          type: string,
          label: FieldDescriptorProto_Label.REPEATED,
          jsonName: "tags",
        },
      ],
    },
    { name: "Item", field: [{ name: "id", number: 1, type: string, label: optional }] },
  ]);
}

const get = (path: string): RuleInit => ({ pattern: { case: "get", value: path } });

describe("restRoutesOfService", () => {
  it("reads the TokenService rules and success statuses", () => {
    const routes = restRoutesOfService(TokenService).map((r) => [
      r.method.name,
      r.httpMethod,
      r.template.source,
      r.body.kind,
      r.successStatus,
    ]);
    assert.deepEqual(routes, [
      ["CreateToken", "POST", "/user/tokens", "all", 201],
      ["DeleteToken", "DELETE", "/user/tokens", "all", 200],
      ["ListTokens", "GET", "/user/tokens", "none", 200],
    ]);
  });

  it("expands additional bindings and skips methods without a rule", () => {
    const routes = restRoutesOfService(GatewayTestService);
    const resource = routes.filter((r) => r.method.name === "GetResource");
    assert.deepEqual(
      resource.map((r) => `${r.httpMethod} ${r.template.source} ${r.body.kind}`),
      [
        "GET /v1/{name=projects/*/resources/*} none",
        "GET /v1/shelves/{shelf}/resource none",
        "POST /v1/{name=projects/*/resources/*}:fetch all",
      ],
    );
    assert.equal(
      routes.some((r) => r.method.name === "Hidden"),
      false,
    );
    const update = routes.find((r) => r.method.name === "UpdateItem");
    assert.equal(update?.body.kind === "field" && update.body.field.name, "item");
    assert.equal(routes.find((r) => r.method.name === "GetItemOnly")?.responseBody?.name, "item");
    assert.equal(routes.find((r) => r.method.name === "LinkItem")?.httpMethod, "LINK");
    assert.equal(routes.find((r) => r.method.name === "CancelItem")?.successStatus, 202);
    assert.equal(routes.find((r) => r.method.name === "GetItem")?.successStatus, 200);
  });

  const broken: [string, RunTimeMethod, RegExp][] = [
    ["an unknown path field", { name: "M", rule: get("/v1/{nope}") }, /path variable \{nope\}/],
    ["a message path field", { name: "M", rule: get("/v1/{item}") }, /singular scalar or enum/],
    ["a repeated path field", { name: "M", rule: get("/v1/{tags}") }, /singular scalar or enum/],
    [
      "an unknown body field",
      { name: "M", rule: { pattern: { case: "post", value: "/v1" }, body: "nope" } },
      /body "nope" is not a field/,
    ],
    [
      "an unknown response_body field",
      { name: "M", rule: { ...get("/v1"), responseBody: "nope" } },
      /response_body "nope"/,
    ],
    ["a bad template", { name: "M", rule: get("v1") }, /must start with \//],
    ["a rule without pattern", { name: "M", rule: {} }, /without a pattern/],
    ["a non-2xx success status", { name: "M", rule: get("/v1"), status: 302 }, /not a 2xx/],
    ["a streaming method", { name: "M", rule: get("/v1"), streaming: true }, /only serves unary/],
    [
      "nested additional bindings",
      {
        name: "M",
        rule: {
          pattern: { case: "get", value: "/v1" },
          additionalBindings: [
            { pattern: { case: "get", value: "/v2" }, additionalBindings: [get("/v3")] },
          ],
        },
      },
      /must not nest/,
    ],
  ];
  for (const [name, spec, error] of broken) {
    it(`throws at start-up for ${name}`, () => {
      assert.throws(() => restRoutesOfService(serviceOf([spec])), error);
    });
  }
});

describe("createRestGateway route table", () => {
  function gatewayOf(methods: RunTimeMethod[]) {
    const service = serviceOf(methods);
    const services = [createServiceImplSpec(service, {})];
    return createRestGateway({ services, invoker: createUnaryInvoker({ services }) });
  }

  it("throws when two rules claim the same method and path shape", () => {
    assert.throws(
      () =>
        gatewayOf([
          { name: "A", rule: get("/v1/{name}") },
          { name: "B", rule: get("/v1/{item.id}") },
        ]),
      /REST routes conflict: GET \/v1\/\* is bound by t\.S\.A and t\.S\.B/,
    );
  });

  it("lists routes most specific first", () => {
    const gateway = gatewayOf([
      { name: "A", rule: get("/v1/{name}") },
      { name: "B", rule: get("/v1/special") },
      {
        name: "C",
        rule: { pattern: { case: "custom", value: { kind: "report", path: "/v1/{name}" } } },
      },
    ]);
    assert.deepEqual(
      gateway.routes.map((r) => `${r.method.name} ${r.httpMethod}`),
      ["B GET", "A GET", "C REPORT"],
    );
  });

  it("rejects a bad maxBodyBytes", () => {
    assert.throws(
      () =>
        createRestGateway({
          services: [],
          invoker: createUnaryInvoker({ services: [] }),
          maxBodyBytes: -1,
        }),
      /maxBodyBytes/,
    );
  });
});
