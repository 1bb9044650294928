import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DescField } from "@bufbuild/protobuf";
import { ApiSchema } from "@bufbuild/protobuf/wkt";
import { isBindablePath, resolveFieldPath } from "../../../src/rest/field-path.js";
import { EchoRequestSchema } from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

const names = (fields: readonly DescField[] | undefined) => fields?.map((f) => f.name);

/** The fields of a path of EchoRequest, failing the test when it does not resolve. */
function path(...parts: string[]): DescField[] {
  const fields = resolveFieldPath(EchoRequestSchema, parts);
  assert.ok(fields, parts.join("."));
  return fields;
}

describe("resolveFieldPath", () => {
  it("resolves top-level and nested fields by their proto names, in order", () => {
    assert.deepEqual(names(resolveFieldPath(EchoRequestSchema, ["shelf"])), ["shelf"]);
    assert.deepEqual(names(resolveFieldPath(EchoRequestSchema, ["item", "label", "text"])), [
      "item",
      "label",
      "text",
    ]);
  });

  it("takes JSON names only when allowed (query parameters)", () => {
    assert.equal(resolveFieldPath(EchoRequestSchema, ["int64Value"]), undefined);
    assert.deepEqual(names(resolveFieldPath(EchoRequestSchema, ["int64Value"], true)), [
      "int64_value",
    ]);
    assert.deepEqual(names(resolveFieldPath(EchoRequestSchema, ["int64_value"], true)), [
      "int64_value",
    ]);
  });

  it("answers undefined for a name no field has, or a part past a scalar", () => {
    assert.equal(resolveFieldPath(EchoRequestSchema, ["nope"]), undefined);
    assert.equal(resolveFieldPath(EchoRequestSchema, ["item", "nope"]), undefined);
    assert.equal(resolveFieldPath(EchoRequestSchema, ["shelf", "id"]), undefined);
  });

  it("goes through repeated and map message fields, so callers can refuse them by name", () => {
    assert.deepEqual(names(resolveFieldPath(EchoRequestSchema, ["items", "id"])), ["items", "id"]);
  });

  it("resolves the empty path to no fields", () => {
    assert.deepEqual(resolveFieldPath(EchoRequestSchema, []), []);
  });
});

describe("isBindablePath", () => {
  it("binds a singular scalar or enum, at the top or under singular messages", () => {
    assert.equal(isBindablePath(path("shelf"), false), true);
    assert.equal(isBindablePath(path("color"), false), true);
    assert.equal(isBindablePath(path("item", "label", "text"), false), true);
    assert.equal(isBindablePath(path("note"), false), true);
    assert.equal(isBindablePath(path("choice_number"), false), true);
  });

  it("binds a repeated scalar or enum leaf only when allowed", () => {
    assert.equal(isBindablePath(path("tags"), false), false);
    assert.equal(isBindablePath(path("tags"), true), true);
    assert.equal(isBindablePath(path("item", "label", "codes"), true), true);
  });

  it("never binds a message, a map or a repeated message as the leaf", () => {
    for (const leaf of [path("item"), path("counts"), path("items")]) {
      assert.equal(isBindablePath(leaf, true), false, leaf[0]?.name);
    }
  });

  it("never binds through a repeated message on the way", () => {
    assert.equal(isBindablePath(path("items", "id"), true), false);
  });

  it("never binds into a well-known type, which has its own JSON form", () => {
    const fields = resolveFieldPath(ApiSchema, ["source_context", "file_name"]);
    assert.deepEqual(names(fields), ["source_context", "file_name"]);
    assert.equal(isBindablePath(fields ?? [], false), false);
  });

  it("binds nothing for no fields", () => {
    assert.equal(isBindablePath([], true), false);
  });
});
