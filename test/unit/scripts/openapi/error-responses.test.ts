import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  defaultErrorResponse,
  errorResponses,
  STATUS_SCHEMA_NAME,
  statusSchema,
} from "../../../../scripts/openapi/error-responses.js";

const STATUS_REF = "#/components/schemas/google.rpc.Status";

/** The schema of the JSON body of a response. */
const schemaOf = (response: { content?: Record<string, { schema?: unknown }> } | undefined) =>
  response?.content?.["application/json"]?.schema;

describe("statusSchema", () => {
  const schema = statusSchema();

  it("requires code, message and details, code an int32 from 1 to 16", () => {
    assert.equal(STATUS_SCHEMA_NAME, "google.rpc.Status");
    assert.deepEqual(schema.required, ["code", "message", "details"]);
    const code = schema.properties?.code;
    assert.deepEqual(
      [code?.type, code?.format, code?.minimum, code?.maximum],
      ["integer", "int32", 1, 16],
    );
    assert.equal(schema.properties?.message?.type, "string");
    assert.deepEqual(schema.properties?.details?.items?.required, ["@type"]);
  });

  it("tables every error code with its name and the gateway's HTTP status", () => {
    const rows = schema.description?.split("\n").filter((line) => /^\| \d+ \|/.test(line));
    assert.equal(rows?.length, 16);
    for (const row of [
      "| 1 | `CANCELLED` | 499 |",
      "| 3 | `INVALID_ARGUMENT` | 400 |",
      "| 5 | `NOT_FOUND` | 404 |",
      "| 8 | `RESOURCE_EXHAUSTED` | 429 |",
      "| 14 | `UNAVAILABLE` | 503 |",
      "| 16 | `UNAUTHENTICATED` | 401 |",
    ]) {
      assert.ok(rows?.includes(row), row);
    }
  });
});

describe("errorResponses", () => {
  it("gives each status one response whose body may carry only that status' codes", () => {
    const responses = errorResponses([
      { code: Code.Unauthenticated, description: "Bad signature." },
      { code: Code.InvalidArgument, description: "Bad field." },
      { code: Code.FailedPrecondition, description: "Bad state." },
    ]);
    assert.deepEqual(Object.keys(responses), ["400", "401"]);
    assert.deepEqual(schemaOf(responses["400"]), {
      type: "object",
      allOf: [{ $ref: STATUS_REF }],
      properties: { code: { enum: [Code.InvalidArgument, Code.FailedPrecondition] } },
    });
    assert.equal(responses["401"]?.description, "Bad signature.");
    assert.equal(responses["401"]?.headers, undefined);
  });

  it("lists the reasons of a status as Markdown items, once each, codes sorted once each", () => {
    const responses = errorResponses([
      { code: Code.AlreadyExists, description: "Name taken." },
      { code: Code.Aborted, description: "Conflict." },
      { code: Code.AlreadyExists, description: "Replayed." },
      { code: Code.AlreadyExists, description: "Name taken." },
    ]);
    assert.equal(responses["409"]?.description, "- Name taken.\n- Conflict.\n- Replayed.");
    assert.deepEqual(schemaOf(responses["409"]), {
      type: "object",
      allOf: [{ $ref: STATUS_REF }],
      properties: { code: { enum: [Code.AlreadyExists, Code.Aborted] } },
    });
  });

  it("takes the HTTP layer's own status when given, and every header of the status' answers", () => {
    const retryAfter = { description: "Seconds.", required: true, schema: { type: "integer" } };
    const responses = errorResponses([
      { code: Code.InvalidArgument, description: "Too large.", httpStatus: 413 },
      { code: Code.InvalidArgument, description: "Not JSON.", httpStatus: 415 },
      {
        code: Code.ResourceExhausted,
        description: "Slow down.",
        headers: { "Retry-After": retryAfter },
      },
      { code: Code.ResourceExhausted, description: "Too many tokens." },
    ]);
    assert.deepEqual(Object.keys(responses), ["413", "415", "429"]);
    assert.deepEqual(responses["429"]?.headers, { "Retry-After": retryAfter });
    assert.equal(responses["413"]?.description, "Too large.");
  });

  it("gives nothing for no answers", () => {
    assert.deepEqual(errorResponses([]), {});
  });
});

describe("defaultErrorResponse", () => {
  it("is any other error, with the Status body", () => {
    const response = defaultErrorResponse();
    assert.match(response.description, /^Any other error/);
    assert.deepEqual(schemaOf(response), { $ref: STATUS_REF });
  });
});
