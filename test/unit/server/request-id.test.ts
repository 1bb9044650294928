import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newRequestId, settleRequestId } from "../../../src/server/request-id.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("request ids", () => {
  it("makes a new UUID each time", () => {
    const a = newRequestId();
    const b = newRequestId();
    assert.match(a, UUID);
    assert.match(b, UUID);
    assert.notEqual(a, b);
  });

  it("keeps the caller's id when it is short and plain", () => {
    for (const id of ["abc", "req-1.2_3:4", "A".repeat(128)]) {
      assert.equal(settleRequestId(id), id);
    }
  });

  it("replaces an id that could mislead a log or a header: a new one instead", () => {
    for (const given of [
      undefined,
      null,
      "",
      "A".repeat(129),
      "has space",
      "line\nbreak",
      'quote"',
      ["a", "b"],
    ]) {
      assert.match(settleRequestId(given), UUID, JSON.stringify(given));
    }
  });
});
