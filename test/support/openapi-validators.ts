import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenApiDocument } from "../../src/openapi/openapi-document.js";

/** Asserts the document is valid OpenAPI 3.1 per @seriousme/openapi-schema-validator. */
export async function assertValidOpenApi31(document: OpenApiDocument | object): Promise<void> {
  const validator = new Validator();
  // A JSON round trip: the document must be plain JSON, and the validator may change what it gets.
  const copy: Record<string, unknown> = JSON.parse(JSON.stringify(document));
  const result = await validator.validate(copy);
  assert.equal(validator.version, "3.1");
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
}

/**
 * A strict Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) that knows the
 * document's component schemas, so each can be compiled by its $ref.
 */
export function componentValidator(document: OpenApiDocument) {
  // strictRequired would refuse `then: {required: ["name"]}`, whose property
  // the enclosing schema defines.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  addFormats.default(ajv);
  for (const format of ["int32", "int64", "uint32", "uint64", "float", "double"]) {
    ajv.addFormat(format, true);
  }
  ajv.addVocabulary(Object.keys(document));
  ajv.addSchema(document, "openapi.json");
  return {
    /**
     * Validates a value against `#/components/schemas/<name>`; returns the
     * error text, or "" when valid. Throws when strict mode refuses the schema.
     */
    errors(name: string, value: unknown): string {
      const validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
      return validate(value) ? "" : ajv.errorsText(validate.errors);
    },
  };
}
