import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type } from "@bufbuild/protobuf/wkt";
import { createOpenApiDocument } from "../../../../scripts/openapi/create-openapi-document.js";
import {
  type JsonSchema,
  type OpenApiOperation,
  type OpenApiParameter,
  openApiHttpMethods,
} from "../../../../src/openapi/openapi-document.js";
import { GatewayTestService } from "../../../gen/perps/gatewaytest/v1/gateway_test_pb.js";
import { assertValidOpenApi31, componentValidator } from "../../../support/openapi-validators.js";
import { type RuleInit, runTimeService } from "../../../support/run-time-service.js";

const MAX_SAFE = 9_007_199_254_740_991;
const doc = createOpenApiDocument({ services: [GatewayTestService] });
const schemas = componentValidator(doc);
const pkg = "perps.gatewaytest.v1";

function op(path: string, method: "get" | "post" | "put" | "patch" | "delete"): OpenApiOperation {
  const operation = doc.paths[path]?.[method];
  assert.ok(
    operation !== undefined,
    `${method} ${path}; have ${Object.keys(doc.paths).join(", ")}`,
  );
  return operation;
}

function param(operation: OpenApiOperation, name: string): OpenApiParameter {
  const found = operation.parameters?.find((p) => p.name === name);
  assert.ok(found !== undefined, `${operation.operationId} has parameter ${name}`);
  return found;
}

function bodySchema(operation: OpenApiOperation): JsonSchema {
  const schema = operation.requestBody?.content["application/json"]?.schema;
  assert.ok(schema !== undefined, `${operation.operationId} has a JSON body`);
  return schema;
}

function successSchema(operation: OpenApiOperation, status = "200"): JsonSchema {
  const schema = operation.responses[status]?.content?.["application/json"]?.schema;
  assert.ok(schema !== undefined, `${operation.operationId} answers ${status} with JSON`);
  return schema;
}

/** A service built at run time, for rules the checked-in protos must not contain. */
function serviceOf(
  methods: { name: string; rule: RuleInit; status?: number; bearer?: boolean }[],
): DescService {
  return runTimeService(methods, [
    {
      name: "Req",
      field: [
        {
          name: "name",
          number: 1,
          type: FieldDescriptorProto_Type.STRING,
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "name",
        },
      ],
    },
  ]);
}

describe("createOpenApiDocument, over every HttpRule feature of the gateway", () => {
  it("is valid OpenAPI 3.1, and its schemas compile in strict Ajv", async () => {
    await assertValidOpenApi31(doc);
    for (const name of Object.keys(doc.components.schemas)) {
      schemas.errors(name, {});
    }
  });

  it("the validator is real: it refuses broken documents", async () => {
    // A Swagger 2 style parameter location.
    const bodyParameter = JSON.stringify(doc).replace('"in":"path"', '"in":"body"');
    await assert.rejects(assertValidOpenApi31(JSON.parse(bodyParameter)));
    await assert.rejects(assertValidOpenApi31({ ...doc, paths: { "v1/no-slash": {} } }));
    await assert.rejects(assertValidOpenApi31({ ...doc, info: { title: "no version" } }));
  });

  it("turns path templates into OpenAPI paths, nested and multi-segment variables included", () => {
    assert.deepEqual(Object.keys(doc.paths), [
      "/v1/any/{wildcard1}/items",
      "/v1/fail",
      "/v1/files/{path}",
      "/v1/items/{item.id}",
      "/v1/links/{shelf}",
      "/v1/shelves/{shelf}/items/{item.id}",
      "/v1/shelves/{shelf}/items/{item.id}:cancel",
      "/v1/shelves/{shelf}/resource",
      "/v1/shelves/{shelf}/tags",
      "/v1/{name}",
      "/v1/{name}:fetch",
    ]);
    assert.deepEqual(Object.keys(doc.paths["/v1/shelves/{shelf}/items/{item.id}"] ?? {}), [
      "get",
      "put",
      "delete",
      "patch",
    ]);
    const resource = param(op("/v1/{name}", "get"), "name");
    assert.equal(resource.in, "path");
    assert.equal(resource.required, true);
    assert.equal(resource.schema.pattern, "^projects/[^/]+/resources/[^/]+$");
    assert.equal(param(op("/v1/files/{path}", "get"), "path").schema.pattern, "^.*$");
    const wildcard = param(op("/v1/any/{wildcard1}/items", "get"), "wildcard1");
    assert.match(wildcard.description ?? "", /not bound to a request field/);
  });

  it("names the operations of additional bindings apart", () => {
    assert.equal(op("/v1/{name}", "get").operationId, `${pkg}.GatewayTestService.GetResource`);
    assert.equal(
      op("/v1/shelves/{shelf}/resource", "get").operationId,
      `${pkg}.GatewayTestService.GetResource-2`,
    );
    assert.equal(
      op("/v1/{name}:fetch", "post").operationId,
      `${pkg}.GatewayTestService.GetResource-3`,
    );
  });

  it("offers the fields neither in the path nor in the body as query parameters", () => {
    const getItem = op("/v1/shelves/{shelf}/items/{item.id}", "get");
    const query = (getItem.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
    assert.ok(query.includes("item.title") && query.includes("item.label.codes"), String(query));
    assert.ok(!query.includes("item.id") && !query.includes("shelf"), "path fields are not");
    assert.ok(!query.includes("items") && !query.includes("counts"), "nor messages and maps");
    assert.deepEqual(param(getItem, "int64Value").schema, { type: "integer", format: "int64" });
    assert.deepEqual(param(getItem, "tags").schema, { type: "array", items: { type: "string" } });
    assert.deepEqual(param(getItem, "color").schema.anyOf?.[0], {
      type: "string",
      enum: ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"],
    });
    // body "item": the rest from the query, but nothing of item.
    const update = op("/v1/shelves/{shelf}/items/{item.id}", "patch");
    const updateQuery = (update.parameters ?? []).map((p) => p.name);
    assert.ok(updateQuery.includes("name"));
    assert.ok(!updateQuery.some((name) => name.startsWith("item.") && name !== "item.id"));
    // body "*": no query parameters at all.
    assert.ok(
      (op("/v1/fail", "post").parameters ?? []).every((p) => p.in !== "query"),
      "body * takes no query",
    );
  });

  it("takes request bodies from body '*' (without path fields) and body '<field>'", () => {
    assert.deepEqual(bodySchema(op("/v1/fail", "post")), {
      $ref: `#/components/schemas/${pkg}.EchoRequest-input`,
    });
    const cancel = bodySchema(op("/v1/shelves/{shelf}/items/{item.id}:cancel", "post"));
    assert.equal(cancel.type, "object");
    assert.ok(!("shelf" in (cancel.properties ?? {})), "shelf comes from the path");
    assert.ok("item" in (cancel.properties ?? {}));
    assert.deepEqual(bodySchema(op("/v1/shelves/{shelf}/items/{item.id}", "patch")), {
      $ref: `#/components/schemas/${pkg}.Item-input`,
    });
    assert.deepEqual(bodySchema(op("/v1/shelves/{shelf}/tags", "post")), {
      type: "array",
      items: { type: "string" },
    });
    assert.equal(op("/v1/shelves/{shelf}/items/{item.id}", "get").requestBody, undefined);
  });

  it("answers under the success status, with response_body's field alone", () => {
    const cancel = op("/v1/shelves/{shelf}/items/{item.id}:cancel", "post");
    assert.ok("202" in cancel.responses && !("200" in cancel.responses));
    assert.deepEqual(successSchema(op("/v1/items/{item.id}", "get")), {
      $ref: `#/components/schemas/${pkg}.Item-output`,
    });
  });

  it("types each direction as the gateway does: strict numbers in, protobuf JSON out", () => {
    const input = (name: string) => doc.components.schemas[`${pkg}.Item-input`]?.properties?.[name];
    const output = (name: string) =>
      doc.components.schemas[`${pkg}.Item-output`]?.properties?.[name];
    assert.deepEqual(input("quantity"), {
      type: "integer",
      format: "int64",
      minimum: -MAX_SAFE,
      maximum: MAX_SAFE,
    });
    assert.deepEqual(output("quantity"), {
      type: "string",
      format: "int64",
      pattern: "^-?[0-9]+$",
    });
    // Label has the same schema both ways, so it has one component.
    assert.ok(`${pkg}.Label` in doc.components.schemas);
    assert.ok(!(`${pkg}.Label-input` in doc.components.schemas));
    assert.equal(schemas.errors(`${pkg}.Item-input`, { quantity: 5 }), "");
    assert.notEqual(schemas.errors(`${pkg}.Item-input`, { quantity: "5" }), "");
    assert.equal(schemas.errors(`${pkg}.Item-output`, { quantity: "5" }), "");
    assert.equal(schemas.errors(`${pkg}.Color-input`, 1), "");
    assert.notEqual(schemas.errors(`${pkg}.Color-output`, 1), "");
  });

  it("allows at most one field of a oneof, maps with typed keys, and base64 bytes", () => {
    const echo = `${pkg}.EchoRequest-input`;
    assert.equal(schemas.errors(echo, { choiceText: "a" }), "");
    assert.notEqual(schemas.errors(echo, { choiceText: "a", choiceNumber: 1 }), "");
    assert.equal(schemas.errors(echo, { labels: { "7": "x" }, counts: { a: 1 } }), "");
    assert.notEqual(schemas.errors(echo, { labels: { seven: "x" } }), "");
    assert.equal(schemas.errors(echo, { data: "aGk=" }), "");
    assert.notEqual(schemas.errors(echo, { data: "not base64!" }), "");
    assert.notEqual(schemas.errors(echo, { int32Value: 2 ** 31 }), "");
  });

  it("keeps HTTP methods OpenAPI has no field for under x-custom-operations", () => {
    const links = doc.paths["/v1/links/{shelf}"];
    assert.deepEqual(Object.keys(links ?? {}), ["x-custom-operations"]);
    assert.equal(
      links?.["x-custom-operations"]?.LINK?.operationId,
      `${pkg}.GatewayTestService.LinkItem`,
    );
  });

  it("documents 413 and 415 only where there is a body, and always 400 and default", () => {
    const get = op("/v1/shelves/{shelf}/items/{item.id}", "get");
    assert.deepEqual(Object.keys(get.responses), ["200", "400", "default"]);
    assert.deepEqual(Object.keys(op("/v1/fail", "post").responses), [
      "200",
      "400",
      "413",
      "415",
      "default",
    ]);
  });

  it("takes constraints, method errors, notes and info from its options", () => {
    const custom = createOpenApiDocument({
      services: [GatewayTestService],
      info: { title: "T", version: "2", license: { name: "MIT", identifier: "MIT" } },
      servers: [{ url: "http://localhost:8080", description: "local" }],
      constraints: {
        [`${pkg}.Item.title`]: { maxLength: 10 },
        [`${pkg}.Item`]: { required: ["title"] },
      },
      methodErrors: {
        [`${pkg}.GatewayTestService.Fail`]: [{ code: 10, description: "aborted" }],
      },
      operationNotes: { [`${pkg}.GatewayTestService.Fail`]: "Fails on purpose." },
      maxBodyBytes: 1000,
    });
    assert.deepEqual(custom.info, {
      title: "T",
      version: "2",
      license: { name: "MIT", identifier: "MIT" },
    });
    assert.deepEqual(custom.servers, [{ url: "http://localhost:8080", description: "local" }]);
    assert.equal(doc.servers, undefined, "none unless given");
    assert.equal(doc.info.license, undefined, "none unless given");
    const item = custom.components.schemas[`${pkg}.Item-input`];
    assert.equal(item?.properties?.title?.maxLength, 10);
    assert.deepEqual(item?.required, ["title"]);
    const fail = custom.paths["/v1/fail"]?.post;
    assert.equal(fail?.responses["409"]?.description, "aborted");
    assert.equal(fail?.description, "Fails on purpose.");
    assert.match(fail?.responses["413"]?.description ?? "", /1000 bytes/);
  });

  it("answers 204 without content", () => {
    const service = serviceOf([
      { name: "Drop", rule: { pattern: { case: "delete", value: "/v1/x" } }, status: 204 },
    ]);
    const d = createOpenApiDocument({ services: [service] });
    assert.deepEqual(d.paths["/v1/x"]?.delete?.responses["204"], { description: "No Content" });
  });

  it("requires bearerAuth exactly on the methods with (perps.api.v1.bearer_auth) = true, no scheme of the others", async () => {
    const service = serviceOf([
      { name: "List", rule: { pattern: { case: "get", value: "/v1/x" } }, bearer: true },
      { name: "Make", rule: { pattern: { case: "post", value: "/v1/x" }, body: "*" } },
      { name: "Drop", rule: { pattern: { case: "delete", value: "/v1/x" } }, bearer: false },
    ]);
    const d = createOpenApiDocument({ services: [service], bearerAuthDescription: "a token" });
    await assertValidOpenApi31(d);
    assert.deepEqual(d.components.securitySchemes, {
      bearerAuth: { type: "http", scheme: "bearer", description: "a token" },
    });
    assert.deepEqual(d.paths["/v1/x"]?.get?.security, [{ bearerAuth: [] }]);
    assert.deepEqual(d.paths["/v1/x"]?.post?.security, []);
    assert.deepEqual(d.paths["/v1/x"]?.delete?.security, []);
    // Without such a method, no scheme at all, and every operation says it needs none.
    assert.equal(doc.components.securitySchemes, undefined);
    const operations = Object.values(doc.paths)
      .flatMap((item) => [
        ...openApiHttpMethods.map((method) => item[method]),
        ...Object.values(item["x-custom-operations"] ?? {}),
      ])
      .filter((operation) => operation !== undefined);
    assert.ok(operations.length > 0);
    for (const operation of operations) {
      assert.deepEqual(operation.security, [], operation.operationId);
    }
  });

  it("leaves a response message without lists or maps of its own as a plain $ref", () => {
    // EchoResponse has none at its top level; only EchoRequest, nested in it, has.
    assert.deepEqual(successSchema(op("/v1/fail", "post")), {
      $ref: `#/components/schemas/${pkg}.EchoResponse`,
    });
  });

  it("refuses paths that OpenAPI would count as one", () => {
    const service = serviceOf([
      { name: "A", rule: { pattern: { case: "get", value: "/v1/{name}" } } },
      { name: "B", rule: { pattern: { case: "delete", value: "/v1/{name=things/*}" } } },
    ]);
    // Both render as /v1/{name}: one path item, which is fine.
    assert.deepEqual(Object.keys(createOpenApiDocument({ services: [service] }).paths), [
      "/v1/{name}",
    ]);
    const clash = serviceOf([
      { name: "A", rule: { pattern: { case: "get", value: "/v1/{name}/x" } } },
      { name: "B", rule: { pattern: { case: "delete", value: "/v1/*/x" } } },
    ]);
    assert.throws(
      () => createOpenApiDocument({ services: [clash] }),
      /\/v1\/\{name\}\/x and \/v1\/\{wildcard1\}\/x differ only in parameter names/,
    );
  });
});
