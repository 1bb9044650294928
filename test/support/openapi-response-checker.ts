import assert from "node:assert/strict";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { STATUS_SCHEMA_NAME } from "../../scripts/openapi/error-responses.js";
import {
  type OpenApiDocument,
  type OpenApiOperation,
  type OpenApiResponse,
  openApiHttpMethods,
} from "../../src/openapi/openapi-document.js";

/** A response as a test received it. */
export interface ReceivedResponse {
  /** HTTP method of the request. */
  method: string;
  /** URL path of the request; a query string is ignored. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

export interface OpenApiResponseChecker {
  /**
   * Asserts that a response is one the document describes: for a documented
   * operation, the response of that status (or `default`), with its schema,
   * content type and required headers; for a path or method the document
   * does not have, a google.rpc.Status error body.
   */
  check(response: ReceivedResponse): void;
}

const DOC_ID = "openapi.json";
// OpenAPI's number formats only annotate; type, minimum and maximum check the value.
const annotationFormats = ["int32", "int64", "uint32", "uint64", "float", "double"];

/**
 * Checks received responses against an OpenAPI 3.1 document with Ajv's
 * JSON Schema 2020-12 validator (the dialect of OpenAPI 3.1), strict mode,
 * formats validated.
 */
export function createOpenApiResponseChecker(document: OpenApiDocument): OpenApiResponseChecker {
  // strictRequired would refuse `then: {required: ["name"]}`, whose property
  // the enclosing schema defines.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  addFormats.default(ajv);
  for (const format of annotationFormats) {
    ajv.addFormat(format, true);
  }
  // The whole document is one schema resource, so "#/components/..." refs
  // resolve; its OpenAPI fields are declared as keywords without meaning.
  ajv.addVocabulary(Object.keys(document));
  ajv.addSchema(document, DOC_ID);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = validators.get(pointer);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  };

  const routes = Object.entries(document.paths).map(([path, item]) => ({
    path,
    // Each {param} is one path segment.
    regex: new RegExp(
      `^${path
        .split(/\{[^}]*\}/)
        .map(escapeRegex)
        .join("[^/]+")}$`,
    ),
    item,
  }));

  return {
    check(res) {
      const where = `${res.method} ${res.path} → ${res.status} ${res.text}`;
      const path = res.path.split("?")[0] ?? "";
      const route = routes.find((r) => r.regex.test(path));
      const method = res.method.toLowerCase();
      const operation: OpenApiOperation | undefined =
        route === undefined || !isMethod(method) ? undefined : route.item[method];
      if (route === undefined || operation === undefined || !isMethod(method)) {
        assert.ok(res.status >= 400, `undocumented operation answered ${where}`);
        checkBody(res, `/components/schemas/${pointerPart(STATUS_SCHEMA_NAME)}`, where);
        return;
      }
      const key = String(res.status) in operation.responses ? String(res.status) : "default";
      const response: OpenApiResponse | undefined = operation.responses[key];
      assert.ok(response !== undefined, `status not documented: ${where}`);
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        if (header.required === true) {
          assert.ok(res.headers.has(name), `header ${name} missing: ${where}`);
        }
      }
      const mediaType = response.content?.["application/json"];
      if (mediaType === undefined) {
        assert.equal(res.text, "", `a body where the document has none: ${where}`);
        return;
      }
      const pointer = [
        "/paths",
        pointerPart(route.path),
        method,
        "responses",
        pointerPart(key),
        "content",
        pointerPart("application/json"),
        "schema",
      ].join("/");
      checkBody(res, pointer, where);
    },
  };

  function checkBody(res: ReceivedResponse, pointer: string, where: string): void {
    assert.match(
      res.headers.get("content-type") ?? "",
      /^application\/json(;|$)/,
      `content-type: ${where}`,
    );
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      assert.fail(`body is not JSON: ${where}`);
    }
    const validate = validatorAt(pointer);
    if (!validate(body)) {
      assert.fail(
        `body does not match the OpenAPI schema at ${pointer}: ${ajv.errorsText(validate.errors)}\n${where}`,
      );
    }
  }
}

function isMethod(method: string): method is (typeof openApiHttpMethods)[number] {
  return (openApiHttpMethods as readonly string[]).includes(method);
}

/** A JSON pointer reference token (RFC 6901), URI-encoded for use in a $ref. */
function pointerPart(text: string): string {
  return encodeURIComponent(text.replaceAll("~", "~0").replaceAll("/", "~1"));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
