import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { checkStrictJson, StrictJsonError } from "../../../src/rest/strict-json.js";
import { EchoRequestSchema } from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

const max = Number.MAX_SAFE_INTEGER;

describe("checkStrictJson accepts", () => {
  const valid: [string, string][] = [
    ["an empty object", "{}"],
    ["the JSON and the proto name", '{"int64Value":1,"int32_value":2}'],
    [
      "64-bit integers up to ±(2^53−1)",
      `{"int64Value":${max},"sint64Value":-${max},"uint64Value":${max}}`,
    ],
    ["an integral number written with a fraction", '{"int32Value":1.0}'],
    ["32-bit bounds", '{"int32Value":-2147483648,"uint32Value":4294967295,"fixed32Value":0}'],
    ["floats", '{"doubleValue":1.5e300,"floatValue":-3.4e38}'],
    ["enums by name or number", '{"color":"COLOR_RED","item":{},"items":[]}'],
    ["an enum number", '{"color":2}'],
    ["bytes", '{"data":"AQID"}'],
    ["repeated fields", '{"tags":["a"],"numbers":[1,-2],"items":[{"quantity":3}]}'],
    ["maps", '{"counts":{"a":1},"labels":{"-7":"x"}}'],
    ["one oneof member", '{"choiceText":"a"}'],
    ["unknown fields of any type", '{"nope":"1","deep":{"x":[null]}}'],
    ["__proto__ and constructor keys", '{"__proto__":{"shelf":1},"constructor":"x","shelf":"s"}'],
  ];
  for (const [name, json] of valid) {
    it(name, () => {
      const value = JSON.parse(json) as JsonValue;
      assert.doesNotThrow(() => checkStrictJson(EchoRequestSchema, value));
      assert.doesNotThrow(() => fromJson(EchoRequestSchema, value, { ignoreUnknownFields: true }));
    });
  }
});

describe("checkStrictJson rejects", () => {
  const invalid: [string, string][] = [
    ["[]", "request body must be a JSON object"],
    ["null", "request body must be a JSON object"],
    ['"x"', "request body must be a JSON object"],
    ["1", "request body must be a JSON object"],
    ['{"int64Value":"1700000000000"}', "int64Value: must be an integer JSON number"],
    ['{"int64Value":1.5}', "int64Value: must be an integer JSON number"],
    ['{"int64Value":1e400}', "int64Value: must be an integer JSON number"],
    ['{"int64Value":null}', "int64Value: must be an integer JSON number"],
    [
      `{"int64Value":${max + 1}}`,
      "int64Value: must be an integer JSON number from -9007199254740991 to 9007199254740991",
    ],
    [
      `{"int64Value":-${max + 1}}`,
      "int64Value: must be an integer JSON number from -9007199254740991 to 9007199254740991",
    ],
    [
      '{"uint64Value":-1}',
      "uint64Value: must be an integer JSON number from 0 to 9007199254740991",
    ],
    [
      '{"int32Value":2147483648}',
      "int32Value: must be an integer JSON number from -2147483648 to 2147483647",
    ],
    ['{"uint32Value":-1}', "uint32Value: must be an integer JSON number from 0 to 4294967295"],
    ['{"shelf":1}', "shelf: must be a JSON string"],
    ['{"shelf":null}', "shelf: must be a JSON string"],
    ['{"shelf":["a"]}', "shelf: must be a JSON string"],
    ['{"shelf":"a\\ud800"}', "shelf: must not contain unpaired surrogates"],
    ['{"tags":["\\udc00x"]}', "tags[0]: must not contain unpaired surrogates"],
    ['{"boolValue":"true"}', "boolValue: must be a JSON boolean"],
    ['{"boolValue":1}', "boolValue: must be a JSON boolean"],
    ['{"doubleValue":"1"}', "doubleValue: must be a finite JSON number"],
    ['{"doubleValue":1e400}', "doubleValue: must be a finite JSON number"],
    ['{"floatValue":1e39}', "floatValue: is out of the range of a 32-bit float"],
    ['{"data":"***"}', "data: must be a base64 JSON string"],
    ['{"color":"PURPLE"}', "color: must be one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN"],
    ['{"color":7}', "color: must be one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN"],
    ['{"item":"x"}', "item: must be a JSON object"],
    ['{"item":null}', "item: must be a JSON object"],
    ['{"item":{"quantity":"3"}}', "item.quantity: must be an integer JSON number"],
    ['{"item":{"label":{"codes":[1,"2"]}}}', "item.label.codes[1]: must be an integer JSON number"],
    ['{"tags":"a"}', "tags: must be a JSON array"],
    ['{"tags":[null]}', "tags[0]: must be a JSON string"],
    ['{"items":[{},{"quantity":1.5}]}', "items[1].quantity: must be an integer JSON number"],
    ['{"counts":[]}', "counts: must be a JSON object"],
    ['{"counts":{"a":"1"}}', 'counts["a"]: must be an integer JSON number'],
    [
      '{"labels":{"x":"y"}}',
      'labels["x"]: map key must be an integer from -2147483648 to 2147483647',
    ],
    [
      '{"choiceText":"a","choiceNumber":1}',
      "choiceNumber: only one of the fields of choice may be set (choiceText is)",
    ],
  ];
  for (const [json, message] of invalid) {
    it(`${json} → ${message}`, () => {
      assert.throws(
        () => checkStrictJson(EchoRequestSchema, JSON.parse(json) as JsonValue),
        (e: unknown) => e instanceof StrictJsonError && e.message === message,
      );
    });
  }
});

describe("checkStrictJson on CreateTokenRequest", () => {
  it("rejects a timestamp given as a string, which fromJson alone would accept", () => {
    const json = { signature: "ab", timestamp: "1700000000000", userId: "u" };
    assert.doesNotThrow(() => fromJson(CreateTokenRequestSchema, json));
    assert.throws(
      () => checkStrictJson(CreateTokenRequestSchema, json),
      /^StrictJsonError: timestamp: must be an integer JSON number$/,
    );
  });

  it("checks the optional expiresIn like any integer", () => {
    const json = { signature: "ab", timestamp: 1, userId: "u", expiresIn: "60" };
    assert.throws(
      () => checkStrictJson(CreateTokenRequestSchema, json),
      /expiresIn: must be an integer JSON number/,
    );
  });

  it("names every wrongly typed field at once, in the order given", () => {
    const json = { signature: 1, timestamp: "1", userId: "u", expiresIn: 1.5, name: true };
    assert.throws(
      () => checkStrictJson(CreateTokenRequestSchema, json),
      (e: unknown) =>
        e instanceof StrictJsonError &&
        e.message ===
          "signature: must be a JSON string; timestamp: must be an integer JSON number; expiresIn: must be an integer JSON number; name: must be a JSON string",
    );
  });
});
