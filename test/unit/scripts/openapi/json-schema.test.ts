import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AnySchema,
  DurationSchema,
  FieldMaskSchema,
  Int64ValueSchema,
  ListValueSchema,
  StringValueSchema,
  StructSchema,
  TimestampSchema,
  ValueSchema,
} from "@bufbuild/protobuf/wkt";
import {
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createSchemaBuilder, fieldKey } from "../../../../scripts/openapi/json-schema.js";
import type { CommentSource } from "../../../../scripts/openapi/proto-comments.js";
import {
  EchoRequestSchema,
  EchoResponseSchema,
} from "../../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const echo = EchoRequestSchema.field;

/** A builder for the gateway test service's echo: requests in, responses out. */
const echoBuilder = (opts: { comments?: CommentSource } = {}) =>
  createSchemaBuilder({
    inputRoots: [EchoRequestSchema],
    outputRoots: [EchoResponseSchema],
    ...opts,
  });

describe("createSchemaBuilder: components", () => {
  it("names a type by its full name, once per direction only where its schema differs by direction", () => {
    const builder = echoBuilder();
    assert.deepEqual(
      builder.message(EchoRequestSchema, "input"),
      ref("perps.gatewaytest.v1.EchoRequest-input"),
    );
    assert.deepEqual(
      builder.message(EchoResponseSchema, "output"),
      ref("perps.gatewaytest.v1.EchoResponse"),
    );
    assert.deepEqual(
      Object.keys(builder.components()),
      [
        "perps.gatewaytest.v1.Color-input",
        "perps.gatewaytest.v1.EchoRequest-input",
        "perps.gatewaytest.v1.EchoRequest-output",
        "perps.gatewaytest.v1.EchoResponse",
        "perps.gatewaytest.v1.Item-input",
        "perps.gatewaytest.v1.Item-output",
        // Strings and int32s only: the same both ways.
        "perps.gatewaytest.v1.Label",
        "perps.gatewaytest.v1.Color-output",
      ].sort(),
    );
  });

  it("gives a type only one direction reaches its plain name", () => {
    const builder = createSchemaBuilder({ inputRoots: [EchoRequestSchema] });
    assert.deepEqual(
      builder.message(EchoRequestSchema, "input"),
      ref("perps.gatewaytest.v1.EchoRequest"),
    );
  });

  it("lists no component before one is referenced", () => {
    assert.deepEqual(echoBuilder().components(), {});
  });

  it("writes a message's fields by JSON name, messages as references, oneof members exclusive", () => {
    const builder = echoBuilder();
    builder.message(EchoRequestSchema, "input");
    const schema = builder.components()["perps.gatewaytest.v1.EchoRequest-input"];
    assert.equal(schema?.type, "object");
    assert.deepEqual(schema?.properties?.item, ref("perps.gatewaytest.v1.Item-input"));
    assert.deepEqual(schema?.properties?.color, ref("perps.gatewaytest.v1.Color-input"));
    assert.ok(schema?.properties?.int64Value);
    assert.equal(schema?.properties?.int64_value, undefined);
    assert.equal(schema?.required, undefined);
    assert.deepEqual(schema?.dependentSchemas, {
      choiceText: { not: { anyOf: [{ required: ["choiceNumber"] }] } },
      choiceNumber: { not: { anyOf: [{ required: ["choiceText"] }] } },
    });
  });

  it("writes a message without the fields a path binds, inline", () => {
    const schema = echoBuilder().messageWithout(
      EchoRequestSchema,
      "input",
      new Set([echo.shelf, echo.choiceText]),
    );
    assert.equal(schema.properties?.shelf, undefined);
    assert.ok(schema.properties?.name);
    // One member of the oneof left: nothing to exclude.
    assert.equal(schema.dependentSchemas, undefined);
  });
});

describe("createSchemaBuilder: values", () => {
  const builder = echoBuilder();
  const both = (field: (typeof echo)[keyof typeof echo]) => [
    builder.field(field, "input"),
    builder.field(field, "output"),
  ];

  it("types 64-bit integers as exact JSON numbers in requests, strings in responses", () => {
    assert.deepEqual(both(echo.int64Value), [
      { type: "integer", format: "int64", minimum: -MAX_SAFE, maximum: MAX_SAFE },
      { type: "string", format: "int64", pattern: "^-?[0-9]+$" },
    ]);
    assert.deepEqual(both(echo.uint64Value), [
      { type: "integer", format: "uint64", minimum: 0, maximum: MAX_SAFE },
      { type: "string", format: "uint64", pattern: "^[0-9]+$" },
    ]);
  });

  it("types 32-bit integers, bools, strings and bytes the same both ways", () => {
    const int32 = { type: "integer", format: "int32", minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };
    const uint32 = { type: "integer", format: "uint32", minimum: 0, maximum: 2 ** 32 - 1 };
    const bytes = {
      type: "string",
      contentEncoding: "base64",
      pattern: "^[A-Za-z0-9+/_-]*={0,2}$",
    };
    assert.deepEqual(both(echo.int32Value), [int32, int32]);
    assert.deepEqual(both(echo.uint32Value), [uint32, uint32]);
    assert.deepEqual(both(echo.fixed32Value), [uint32, uint32]);
    assert.deepEqual(both(echo.boolValue), [{ type: "boolean" }, { type: "boolean" }]);
    assert.deepEqual(both(echo.name), [{ type: "string" }, { type: "string" }]);
    assert.deepEqual(both(echo.data), [bytes, bytes]);
  });

  it("types floats as finite numbers in requests, also NaN and the infinities in responses", () => {
    const nonFinite = { type: "string", enum: ["NaN", "Infinity", "-Infinity"] };
    const float = {
      type: "number",
      format: "float",
      minimum: -3.4028234663852886e38,
      maximum: 3.4028234663852886e38,
    };
    assert.deepEqual(both(echo.floatValue), [float, { anyOf: [float, nonFinite] }]);
    assert.deepEqual(both(echo.doubleValue), [
      { type: "number", format: "double" },
      { anyOf: [{ type: "number", format: "double" }, nonFinite] },
    ]);
  });

  it("takes an enum by name or number in requests, writes it by name in responses", () => {
    builder.field(echo.color, "input");
    builder.field(echo.color, "output");
    const components = builder.components();
    const names = ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"];
    assert.deepEqual(components["perps.gatewaytest.v1.Color-input"], {
      anyOf: [
        { type: "string", enum: names },
        { type: "integer", enum: [0, 1, 2] },
      ],
    });
    assert.deepEqual(components["perps.gatewaytest.v1.Color-output"], {
      type: "string",
      enum: names,
    });
  });

  it("writes lists as arrays and maps as objects keyed by text", () => {
    assert.deepEqual(builder.field(echo.tags, "input"), {
      type: "array",
      items: { type: "string" },
    });
    assert.deepEqual(builder.field(echo.items, "output"), {
      type: "array",
      items: ref("perps.gatewaytest.v1.Item-output"),
    });
    assert.deepEqual(builder.field(echo.counts, "output"), {
      type: "object",
      propertyNames: { type: "string" },
      additionalProperties: { type: "string", format: "int64", pattern: "^-?[0-9]+$" },
    });
    assert.deepEqual(builder.field(echo.labels, "input"), {
      type: "object",
      propertyNames: { type: "string", pattern: "^-?[0-9]+$" },
      additionalProperties: { type: "string" },
    });
  });

  it("writes well-known types in their own JSON forms, inline", () => {
    const b = createSchemaBuilder();
    assert.deepEqual(b.message(TimestampSchema, "input"), { type: "string", format: "date-time" });
    assert.deepEqual(b.message(DurationSchema, "output"), {
      type: "string",
      pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$",
    });
    assert.deepEqual(b.message(FieldMaskSchema, "input"), { type: "string" });
    assert.deepEqual(b.message(StructSchema, "input"), { type: "object" });
    assert.deepEqual(b.message(ListValueSchema, "input"), { type: "array" });
    assert.deepEqual(b.message(ValueSchema, "input"), {});
    assert.deepEqual(b.message(AnySchema, "output"), {
      type: "object",
      properties: { "@type": { type: "string" } },
      required: ["@type"],
    });
    assert.deepEqual(b.message(StringValueSchema, "input"), { type: "string" });
    assert.deepEqual(b.message(Int64ValueSchema, "input").type, "integer");
    assert.deepEqual(b.message(Int64ValueSchema, "output").type, "string");
    assert.deepEqual(b.field(ValueSchema.field.nullValue, "output"), { type: "null" });
    assert.deepEqual(b.components(), {});
  });
});

describe("createSchemaBuilder: rules, constraints and comments", () => {
  it("writes buf.validate rules and required fields into requests only", () => {
    const builder = createSchemaBuilder({ inputRoots: [CreateTokenRequestSchema] });
    builder.message(CreateTokenRequestSchema, "input");
    const schema = builder.components()["perps.token.v1.CreateTokenRequest"];
    assert.deepEqual(schema?.required, ["signature", "timestamp", "userId"]);
    assert.equal(schema?.properties?.signature?.pattern, "^[0-9a-f]{128}$");
    assert.equal(schema?.properties?.name?.maxLength, 128);
    const signature = CreateTokenRequestSchema.field.signature;
    assert.deepEqual(builder.field(signature, "output"), { type: "string" });
  });

  it("merges constraints over the generated schema, joining required lists", () => {
    const name = CreateTokenRequestSchema.field.name;
    assert.equal(fieldKey(name), "perps.token.v1.CreateTokenRequest.name");
    const builder = createSchemaBuilder({
      inputRoots: [CreateTokenRequestSchema],
      constraints: {
        [fieldKey(name)]: { maxLength: 64, examples: ["ci"] },
        "perps.token.v1.CreateTokenRequest": { required: ["userId", "name"] },
      },
    });
    builder.message(CreateTokenRequestSchema, "input");
    const schema = builder.components()["perps.token.v1.CreateTokenRequest"];
    assert.deepEqual(schema?.required, ["signature", "timestamp", "userId", "name"]);
    assert.equal(schema?.properties?.name?.maxLength, 64);
    assert.equal(schema?.properties?.name?.minLength, 1);
    assert.deepEqual(schema?.properties?.name?.examples, ["ci"]);
  });

  it("describes types, fields and enum values with their comments", () => {
    const comments: CommentSource = (desc) =>
      desc.kind === "enum_value" && desc.number === 0 ? undefined : `About ${desc.name}.`;
    const builder = echoBuilder({ comments });
    assert.deepEqual(builder.field(echo.name, "input"), {
      type: "string",
      description: "About name.",
    });
    builder.field(echo.color, "output");
    assert.equal(
      builder.components()["perps.gatewaytest.v1.Color-output"]?.description,
      "About Color.\n\n- `COLOR_RED`: About COLOR_RED.\n- `COLOR_GREEN`: About COLOR_GREEN.",
    );
    builder.message(CreateTokenResponseSchema, "output");
    assert.equal(
      builder.components()["perps.token.v1.CreateTokenResponse"]?.description,
      "About CreateTokenResponse.",
    );
  });
});

describe("createSchemaBuilder: textField", () => {
  const builder = echoBuilder({ comments: () => "A comment." });

  it("types a value written in a URL as exactly as the gateway parses it, without a description", () => {
    assert.deepEqual(builder.textField(echo.int64Value), { type: "integer", format: "int64" });
    assert.deepEqual(builder.textField(echo.uint64Value), {
      type: "integer",
      format: "uint64",
      minimum: 0,
    });
    assert.deepEqual(builder.textField(echo.floatValue), { type: "number", format: "float" });
    assert.deepEqual(builder.textField(echo.int32Value), {
      type: "integer",
      format: "int32",
      minimum: -(2 ** 31),
      maximum: 2 ** 31 - 1,
    });
    assert.deepEqual(builder.textField(echo.tags), { type: "array", items: { type: "string" } });
    assert.deepEqual(builder.textField(echo.color), {
      anyOf: [
        { type: "string", enum: ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"] },
        { type: "integer", enum: [0, 1, 2] },
      ],
    });
    assert.deepEqual(builder.components(), {});
  });

  it("applies the field's rules, as a parameter is part of a request", () => {
    assert.deepEqual(createSchemaBuilder().textField(CreateTokenRequestSchema.field.expiresIn), {
      type: "integer",
      format: "int64",
      minimum: 1,
      maximum: MAX_SAFE,
    });
  });
});
