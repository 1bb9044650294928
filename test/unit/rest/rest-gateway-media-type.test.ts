import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isJsonMediaType } from "../../../src/rest/rest-gateway.js";

describe("isJsonMediaType", () => {
  const table: [string | undefined, boolean][] = [
    ["application/json", true],
    ["Application/JSON", true],
    ["application/json; charset=utf-8", true],
    ['application/json;charset="UTF-8"', true],
    ["application/json; version=2", true],
    ["application/json; charset=iso-8859-1", false],
    ["application/jsonx", false],
    ["text/json", false],
    ["text/plain", false],
    ["application/x-www-form-urlencoded", false],
    ["", false],
    [undefined, false],
  ];
  for (const [contentType, expected] of table) {
    it(`${String(contentType)} → ${expected}`, () => {
      assert.equal(isJsonMediaType(contentType), expected);
    });
  }
});
