import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { openApiHttpMethods } from "../../../src/openapi/openapi-document.js";

/** The OpenAPI 3.1 JSON Schema that @seriousme/openapi-schema-validator validates with. */
function openApi31Schema(): unknown {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@seriousme/openapi-schema-validator/schemas/v3.1/schema.json");
  return JSON.parse(readFileSync(file, "utf8"));
}

/** The Path Item Object's fields that hold an Operation Object, in the schema's order. */
function operationFields(schema: unknown): string[] {
  assert.ok(typeof schema === "object" && schema !== null && "$defs" in schema);
  const defs = schema.$defs;
  assert.ok(typeof defs === "object" && defs !== null && "path-item" in defs);
  const pathItem = defs["path-item"];
  assert.ok(typeof pathItem === "object" && pathItem !== null && "properties" in pathItem);
  const properties = pathItem.properties;
  assert.ok(typeof properties === "object" && properties !== null);
  return Object.entries(properties)
    .filter(([, value]) => JSON.stringify(value) === JSON.stringify({ $ref: "#/$defs/operation" }))
    .map(([name]) => name);
}

describe("openApiHttpMethods", () => {
  it("are the Path Item Object's operation fields of OpenAPI 3.1, in the spec's order", () => {
    assert.deepEqual([...openApiHttpMethods], operationFields(openApi31Schema()));
  });
});
