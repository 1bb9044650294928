import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nodeHeaders, stringOrNull, webHeaders } from "../../../src/http/web-headers.js";

describe("a request's headers as WHATWG Headers", () => {
  it("leaves out HTTP/2 pseudo-headers and missing values, and keeps every value of a repeated one", () => {
    const header = webHeaders({
      ":method": "POST",
      ":path": "/x",
      "content-type": "application/grpc",
      "x-many": ["a", "b"],
      "x-none": undefined,
    });
    assert.deepEqual(
      [...header],
      [
        ["content-type", "application/grpc"],
        ["x-many", "a, b"],
      ],
    );
  });

  it("leaves out the names `skip` says", () => {
    const header = webHeaders(
      { authorization: "Bearer t", "x-request-id": "r" },
      (name) => name === "authorization",
    );
    assert.equal(header.has("authorization"), false);
    assert.equal(header.get("x-request-id"), "r");
  });
});

describe("Headers for node", () => {
  it("adds them to the caller's record, and returns that record", () => {
    const into: Record<string, string | number> = { ":status": 200 };
    const out = nodeHeaders(new Headers({ "Content-Type": "application/proto", "x-a": "1" }), into);
    assert.equal(out, into, "not a copy");
    assert.deepEqual(out, { ":status": 200, "content-type": "application/proto", "x-a": "1" });
  });

  it("skips the names `skip` says, and gives the record alone for no headers", () => {
    const skipped = nodeHeaders(
      new Headers({ "content-length": "3", "x-a": "1" }),
      {},
      (name) => name === "content-length",
    );
    assert.deepEqual(skipped, { "x-a": "1" });
    assert.deepEqual(nodeHeaders(undefined, { "grpc-status": "0" }), { "grpc-status": "0" });
    assert.deepEqual(nodeHeaders(undefined), {});
  });
});

describe("a request header's value as Connect reads it", () => {
  it("is the one string, or null for none or several", () => {
    assert.equal(stringOrNull("gzip"), "gzip");
    assert.equal(stringOrNull(undefined), null);
    assert.equal(stringOrNull(["gzip", "br"]), null);
  });
});
