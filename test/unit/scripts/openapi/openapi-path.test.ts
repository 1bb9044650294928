import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type } from "@bufbuild/protobuf/wkt";
import { openApiPathOf, pathShape } from "../../../../scripts/openapi/openapi-path.js";
import { type RestRoute, restRoutesOfService } from "../../../../src/rest/rest-route.js";
import { GatewayTestService } from "../../../gen/perps/gatewaytest/v1/gateway_test_pb.js";
import { runTimeService } from "../../../support/run-time-service.js";

const gatewayRoutes = restRoutesOfService(GatewayTestService);

/** The route of the gateway test service whose template is `template`. */
function route(template: string): RestRoute {
  const found = gatewayRoutes.find((r) => r.template.source === template);
  assert.ok(found, template);
  return found;
}

/** The OpenAPI path and, per parameter, its name, field names, pattern and segments. */
function pathOf(r: RestRoute) {
  const { path, params } = openApiPathOf(r);
  return {
    path,
    params: params.map((p) => [
      p.name,
      p.fields?.map((f) => f.name).join("."),
      p.multiSegmentPattern,
      p.segments,
    ]),
  };
}

/** The one route of a run-time service `t.S` whose request `t.Req` has a string field `wildcard1`. */
function runTimeRoute(template: string): RestRoute {
  const service = runTimeService(
    [{ name: "Get", rule: { pattern: { case: "get", value: template } } }],
    [
      {
        name: "Req",
        field: [
          {
            name: "wildcard1",
            number: 1,
            type: FieldDescriptorProto_Type.STRING,
            label: FieldDescriptorProto_Label.OPTIONAL,
            jsonName: "wildcard1",
          },
        ],
      },
    ],
  );
  const [only] = restRoutesOfService(service);
  assert.ok(only);
  return only;
}

describe("openApiPathOf", () => {
  it("names each single-segment variable by its field path in JSON names", () => {
    assert.deepEqual(pathOf(route("/v1/shelves/{shelf}/items/{item.id}")), {
      path: "/v1/shelves/{shelf}/items/{item.id}",
      params: [
        ["shelf", "shelf", undefined, "*"],
        ["item.id", "item.id", undefined, "*"],
      ],
    });
  });

  it("makes a multi-segment variable one parameter, with a pattern for its slashes", () => {
    assert.deepEqual(pathOf(route("/v1/{name=projects/*/resources/*}")), {
      path: "/v1/{name}",
      params: [["name", "name", "^projects/[^/]+/resources/[^/]+$", "projects/*/resources/*"]],
    });
    assert.deepEqual(pathOf(route("/v1/files/{path=**}")), {
      path: "/v1/files/{path}",
      params: [["path", "path", "^.*$", "**"]],
    });
  });

  it("keeps the custom verb after the last segment", () => {
    assert.equal(
      openApiPathOf(route("/v1/shelves/{shelf}/items/{item.id}:cancel")).path,
      "/v1/shelves/{shelf}/items/{item.id}:cancel",
    );
  });

  it("makes anonymous wildcards parameters wildcard1, wildcard2, ... bound to no field", () => {
    assert.deepEqual(pathOf(route("/v1/any/*/items")), {
      path: "/v1/any/{wildcard1}/items",
      params: [["wildcard1", undefined, undefined, "*"]],
    });
    assert.deepEqual(pathOf(runTimeRoute("/v1/*/x/**")), {
      path: "/v1/{wildcard1}/x/{wildcard2}",
      params: [
        ["wildcard1", undefined, undefined, "*"],
        ["wildcard2", undefined, "^.*$", "**"],
      ],
    });
  });

  it("skips a wildcard name that a field already has", () => {
    assert.deepEqual(pathOf(runTimeRoute("/v1/{wildcard1}/*")), {
      path: "/v1/{wildcard1}/{wildcard2}",
      params: [
        ["wildcard1", "wildcard1", undefined, "*"],
        ["wildcard2", undefined, undefined, "*"],
      ],
    });
  });

  it("writes literals as path characters, percent-encoding only what a segment cannot hold", () => {
    // The template's literals are decoded ("a b", "ü", "x~y!$"), then encoded for OpenAPI.
    assert.equal(
      openApiPathOf(runTimeRoute("/v1/a%20b/%C3%BC/x~y%21$")).path,
      "/v1/a%20b/%C3%BC/x~y!$",
    );
  });

  it("escapes a multi-segment variable's literals in its pattern", () => {
    const [param] = openApiPathOf(runTimeRoute("/v1/{wildcard1=a.b/*}")).params;
    assert.equal(param?.multiSegmentPattern, "^a\\.b/[^/]+$");
    assert.ok(new RegExp(param?.multiSegmentPattern ?? "").test("a.b/c"));
    assert.ok(!new RegExp(param?.multiSegmentPattern ?? "").test("axb/c"));
  });
});

describe("pathShape", () => {
  it("blanks parameter names, so paths of one shape compare equal", () => {
    assert.equal(
      pathShape("/v1/shelves/{shelf}/items/{item.id}:cancel"),
      "/v1/shelves/{}/items/{}:cancel",
    );
    assert.equal(pathShape("/v1/{a}/x"), pathShape("/v1/{wildcard1}/x"));
    assert.notEqual(pathShape("/v1/{a}/x"), pathShape("/v1/{a}/y"));
    assert.equal(pathShape("/user/tokens"), "/user/tokens");
  });
});
