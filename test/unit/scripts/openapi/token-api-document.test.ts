import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createTokenApiOpenApiDocument } from "../../../../scripts/openapi/token-api-document.js";
import type {
  JsonSchema,
  OpenApiDocument,
  OpenApiOperation,
  OpenApiResponse,
} from "../../../../src/openapi/openapi-document.js";
import { createOpenApiResponseChecker } from "../../../support/openapi-response-checker.js";
import { assertValidOpenApi31, componentValidator } from "../../../support/openapi-validators.js";

const MAX_SAFE = 9_007_199_254_740_991;
const doc = createTokenApiOpenApiDocument();
const schemas = componentValidator(doc);

function operation(method: "post" | "delete" | "get"): OpenApiOperation {
  const op = doc.paths["/user/tokens"]?.[method];
  assert.ok(op !== undefined, `${method} /user/tokens is documented`);
  return op;
}

function response(method: "post" | "delete" | "get", status: string): OpenApiResponse {
  const res = operation(method).responses[status];
  assert.ok(res !== undefined, `${method} answers ${status}`);
  return res;
}

function component(name: string): JsonSchema {
  const schema = doc.components.schemas[name];
  assert.ok(schema !== undefined, name);
  return schema;
}

function property(message: string, field: string): JsonSchema {
  const schema = component(`perps.token.v1.${message}`).properties?.[field];
  assert.ok(schema !== undefined, `${message}.${field}`);
  return schema;
}

function jsonSchemaOf(res: OpenApiResponse): JsonSchema {
  const schema = res.content?.["application/json"]?.schema;
  assert.ok(schema !== undefined);
  return schema;
}

const validCreate = {
  signature: "ab".repeat(64),
  timestamp: 1_763_726_400_000,
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
};

describe("the token API's OpenAPI document", () => {
  it("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    await assertValidOpenApi31(doc);
  });

  it("has schemas that strict Ajv (JSON Schema 2020-12) compiles", () => {
    for (const name of Object.keys(doc.components.schemas)) {
      schemas.errors(name, {});
    }
  });

  it("is deterministic", () => {
    assert.equal(JSON.stringify(createTokenApiOpenApiDocument()), JSON.stringify(doc));
  });

  it("has exactly GET, POST and DELETE /user/tokens, POST and DELETE with their request message as body", () => {
    assert.deepEqual(Object.keys(doc.paths), ["/user/tokens"]);
    assert.deepEqual(Object.keys(doc.paths["/user/tokens"] ?? {}), ["get", "post", "delete"]);
    assert.equal(operation("post").operationId, "perps.token.v1.TokenService.CreateToken");
    assert.deepEqual(operation("post").requestBody?.content["application/json"]?.schema, {
      $ref: "#/components/schemas/perps.token.v1.CreateTokenRequest",
    });
    assert.deepEqual(operation("delete").requestBody?.content["application/json"]?.schema, {
      $ref: "#/components/schemas/perps.token.v1.DeleteTokenRequest",
    });
    assert.equal(operation("post").requestBody?.required, true);
    // Everything is in the body: no path or query parameters.
    assert.equal(operation("post").parameters, undefined);
  });

  it("answers create with 201 (not 200) and delete with 200 {}", () => {
    assert.ok(!("200" in operation("post").responses));
    assert.deepEqual(jsonSchemaOf(response("post", "201")), {
      $ref: "#/components/schemas/perps.token.v1.CreateTokenResponse",
    });
    assert.deepEqual(jsonSchemaOf(response("delete", "200")), {
      $ref: "#/components/schemas/perps.token.v1.DeleteTokenResponse",
    });
    assert.equal(schemas.errors("perps.token.v1.DeleteTokenResponse", {}), "");
    assert.deepEqual(component("perps.token.v1.CreateTokenResponse").required, [
      "expiresAt",
      "id",
      "token",
    ]);
  });

  it("documents the error statuses each operation can answer, with the Status body", () => {
    assert.deepEqual(Object.keys(operation("post").responses), [
      "201",
      "400",
      "401",
      "409",
      "413",
      "415",
      "429",
      "503",
      "default",
    ]);
    assert.deepEqual(Object.keys(operation("delete").responses), [
      "200",
      "400",
      "401",
      "404",
      "413",
      "415",
      "429",
      "503",
      "default",
    ]);
    const codes: Record<string, number> = {
      "400": 3,
      "401": 16,
      "404": 5,
      "409": 6,
      "413": 3,
      "415": 3,
      "429": 8,
      "503": 14,
    };
    for (const method of ["post", "delete"] as const) {
      for (const [status, res] of Object.entries(operation(method).responses)) {
        if (status.startsWith("2")) continue;
        const schema = jsonSchemaOf(res);
        if (status === "default") {
          assert.deepEqual(schema, { $ref: "#/components/schemas/google.rpc.Status" });
          continue;
        }
        assert.deepEqual(schema.allOf, [{ $ref: "#/components/schemas/google.rpc.Status" }]);
        assert.deepEqual(schema.properties?.code, { enum: [codes[status]] }, status);
      }
    }
  });

  it("GET /user/tokens (ListTokens) requires bearerAuth; the signed create and delete no scheme", () => {
    assert.deepEqual(doc.components.securitySchemes?.bearerAuth?.type, "http");
    assert.deepEqual(doc.components.securitySchemes?.bearerAuth?.scheme, "bearer");
    assert.deepEqual(Object.keys(doc.components.securitySchemes ?? {}), ["bearerAuth"]);
    assert.deepEqual(operation("get").security, [{ bearerAuth: [] }]);
    assert.deepEqual(operation("post").security, []);
    assert.deepEqual(operation("delete").security, []);
    // No body: the header, and the page asked for in the query (issue 34).
    assert.equal(operation("get").requestBody, undefined);
    assert.deepEqual(
      operation("get").parameters?.map((p) => [p.name, p.in, p.schema]),
      [
        ["pageSize", "query", { type: "integer", format: "int32", minimum: 0, maximum: 100 }],
        ["pageToken", "query", { type: "string", maxLength: 1024 }],
      ],
    );
    assert.equal(operation("get").operationId, "perps.token.v1.TokenService.ListTokens");
  });

  it("GET /user/tokens answers 200 {tokens: [...]}, the key always present, and 401 with WWW-Authenticate", () => {
    assert.deepEqual(Object.keys(operation("get").responses), [
      "200",
      "400",
      "401",
      "429",
      "503",
      "default",
    ]);
    const checker = createOpenApiResponseChecker(doc);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      checker.check({
        method: "GET",
        path: "/user/tokens",
        status,
        headers: new Headers({ "content-type": "application/json", ...headers }),
        text: JSON.stringify(body),
      });
    answer(200, { tokens: [] });
    answer(200, {
      tokens: [{ id: "YAnc9iX83Ws3U0fLFuOMmw", name: "bot", expiresAt: "2026-11-21" }],
    });
    assert.throws(() => answer(200, {}), /tokens/);
    assert.throws(() => answer(200, { tokens: [{ id: "x", name: "bot" }] }), /expiresAt/);
    assert.throws(() => answer(200, { tokens: [{ id: "x", name: "", expiresAt: "2026-11-21" }] }));
    const unauthenticated = { code: 16, message: "x", details: [] };
    answer(401, unauthenticated, { "www-authenticate": 'Bearer realm="perps-tokens"' });
    assert.throws(() => answer(401, unauthenticated), /WWW-Authenticate/);
    const header = response("get", "401").headers?.["WWW-Authenticate"];
    assert.equal(header?.required, true);
    assert.deepEqual(header?.schema, {
      type: "string",
      enum: ['Bearer realm="perps-tokens"', 'Bearer realm="perps-tokens", error="invalid_token"'],
    });
    assert.match(response("get", "401").description, /error="invalid_token"/);
  });

  it("429 carries a required Retry-After header", () => {
    for (const method of ["post", "delete"] as const) {
      const header = response(method, "429").headers?.["Retry-After"];
      assert.equal(header?.required, true);
      assert.deepEqual(header?.schema, { type: "integer", minimum: 1 });
    }
  });

  it("the error shape is {code: integer, message: string, details: array}, all required", () => {
    const status = component("google.rpc.Status");
    assert.deepEqual(status.required, ["code", "message", "details"]);
    assert.equal(status.properties?.code?.type, "integer");
    assert.equal(status.properties?.message?.type, "string");
    assert.equal(status.properties?.details?.type, "array");
    assert.equal(schemas.errors("google.rpc.Status", { code: 3, message: "x", details: [] }), "");
    assert.notEqual(
      schemas.errors("google.rpc.Status", { code: "3", message: "x", details: [] }),
      "",
    );
    assert.notEqual(schemas.errors("google.rpc.Status", { code: 3, message: "x" }), "");
    // The code → status table of the gateway is in its description.
    assert.match(status.description ?? "", /\| 16 \| `UNAUTHENTICATED` \| 401 \|/);
    assert.match(status.description ?? "", /\| 8 \| `RESOURCE_EXHAUSTED` \| 429 \|/);
  });

  it("marks the REQUIRED fields required, in camelCase JSON names", () => {
    assert.deepEqual(component("perps.token.v1.CreateTokenRequest").required, [
      "signature",
      "timestamp",
      "userId",
    ]);
    assert.deepEqual(component("perps.token.v1.DeleteTokenRequest").required, [
      "signature",
      "timestamp",
      "tokenId",
      "userId",
    ]);
    // Every field, by its JSON name, in the proto's order.
    assert.deepEqual(
      Object.keys(component("perps.token.v1.CreateTokenRequest").properties ?? {}),
      CreateTokenRequestSchema.fields.map((field) => field.jsonName),
    );
    assert.ok(
      Object.keys(component("perps.token.v1.CreateTokenRequest").properties ?? {}).includes(
        "userId",
      ),
    );
  });

  it("types int64 fields as integers within ±(2^53−1), as the strict gateway does, expiresIn up to the lifetime limit", () => {
    for (const [message, field] of [
      ["CreateTokenRequest", "timestamp"],
      ["DeleteTokenRequest", "timestamp"],
    ]) {
      const schema = property(message ?? "", field ?? "");
      assert.equal(schema.type, "integer");
      assert.equal(schema.minimum, -MAX_SAFE);
      assert.equal(schema.maximum, MAX_SAFE);
    }
    const expiresIn = property("CreateTokenRequest", "expiresIn");
    assert.equal(expiresIn.type, "integer");
    assert.equal(expiresIn.minimum, 1);
    // The configured lifetime limit (the default configuration's here), not the proto's int64 range.
    assert.equal(expiresIn.maximum, 31_536_000);
    assert.equal(expiresIn.default, 604_800);
  });

  it("carries the field patterns and lengths of the service's rules", () => {
    assert.equal(property("CreateTokenRequest", "signature").pattern, "^[0-9a-f]{128}$");
    assert.equal(property("DeleteTokenRequest", "signature").pattern, "^[0-9a-f]{128}$");
    assert.equal(property("CreateTokenRequest", "userId").format, "uuid");
    assert.ok(property("DeleteTokenRequest", "userId").pattern !== undefined);
    const name = property("CreateTokenRequest", "name");
    assert.deepEqual([name.minLength, name.maxLength], [1, 128]);
    const tokenId = property("DeleteTokenRequest", "tokenId");
    assert.deepEqual([tokenId.minLength, tokenId.maxLength], [1, 128]);
    assert.equal(property("CreateTokenResponse", "expiresAt").format, "date");
  });

  it("the request schemas accept and refuse what the service does", () => {
    const check = (value: object) => schemas.errors("perps.token.v1.CreateTokenRequest", value);
    assert.equal(check(validCreate), "");
    assert.equal(check({ ...validCreate, userId: validCreate.userId.toUpperCase() }), "");
    assert.equal(check({ ...validCreate, expiresIn: 604_800 }), "");
    assert.equal(check({ ...validCreate, expiresIn: 604_801, name: "named" }), "");
    assert.equal(check({ ...validCreate, name: "🚀".repeat(128) }), "");
    assert.equal(check({ ...validCreate, unknownField: [1, 2] }), "", "unknown fields are ignored");
    for (const [why, value] of [
      ["uppercase signature", { ...validCreate, signature: "AB".repeat(64) }],
      ["0x signature", { ...validCreate, signature: `0x${"ab".repeat(63)}` }],
      ["timestamp as a string", { ...validCreate, timestamp: "1763726400000" }],
      ["timestamp 2^53", { ...validCreate, timestamp: 2 ** 53 }],
      ["timestamp with a fraction", { ...validCreate, timestamp: 1.5 }],
      ["userId version 9", { ...validCreate, userId: "0b3c4d5e-1f2a-9b4c-8d9e-0123456789ab" }],
      ["userId variant c", { ...validCreate, userId: "0b3c4d5e-1f2a-4b4c-cd9e-0123456789ab" }],
      ["expiresIn 0", { ...validCreate, expiresIn: 0 }],
      ["expiresIn null", { ...validCreate, expiresIn: null }],
      ["expiresIn 604801 without name", { ...validCreate, expiresIn: 604_801 }],
      ["empty name", { ...validCreate, name: "" }],
      ["name of 129 characters", { ...validCreate, name: "n".repeat(129) }],
      ["name with a newline", { ...validCreate, name: "a\nb" }],
      ["name with a C1 control", { ...validCreate, name: "a\u0085b" }],
      ["no signature", { timestamp: 1, userId: validCreate.userId }],
    ] as const) {
      assert.notEqual(check(value), "", why);
    }
    const del = (value: object) => schemas.errors("perps.token.v1.DeleteTokenRequest", value);
    const { signature, timestamp, userId } = validCreate;
    assert.equal(del({ signature, timestamp, userId, tokenId: "t".repeat(128) }), "");
    assert.notEqual(del({ signature, timestamp, userId, tokenId: "" }), "");
    assert.notEqual(del({ signature, timestamp, userId, tokenId: "t".repeat(129) }), "");
    assert.notEqual(del({ signature, timestamp, userId }), "");
  });

  it("describes the signing scheme", () => {
    const text = doc.info.description ?? "";
    assert.match(text, /createToken:<timestamp>:<expiresIn>:<name>:<userId>/);
    assert.match(text, /deleteToken:<timestamp>:<tokenId>:<userId>/);
    assert.match(text, /createToken:<timestamp>:::<userId>/, "empty slots");
    assert.match(text, /UTF-8/);
    assert.match(text, /Ed25519/);
    assert.match(text, /128 lowercase hex characters, without `0x`/);
    assert.match(text, /2 minutes/);
    assert.match(text, /Signature expired/);
    assert.match(text, /Invalid signature/);
    assert.match(text, /Signature already used/);
    assert.match(operation("post").description ?? "", /createToken:<timestamp>::<name>:<userId>/);
    assert.match(
      operation("delete").description ?? "",
      /deleteToken:<timestamp>:<tokenId>:<userId>/,
    );
    assert.match(response("post", "401").description, /Signature already used/);
  });

  it("has the spec's version, a proprietary license, and the serving and default local listeners as servers unless given", () => {
    assert.equal(doc.info.version, "1.0");
    assert.deepEqual(doc.info.license, {
      name: "Proprietary",
      identifier: "LicenseRef-Proprietary",
    });
    assert.deepEqual(
      doc.servers?.map((s) => s.url),
      ["/", "http://127.0.0.1:8080"],
    );
    const withServer: OpenApiDocument = createTokenApiOpenApiDocument({
      servers: [{ url: "https://api.example.com" }],
    });
    assert.deepEqual(withServer.servers, [{ url: "https://api.example.com" }]);
  });
});
