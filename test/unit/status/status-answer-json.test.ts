import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { statusJson } from "../../../src/status/status-answer.js";

describe("statusJson", () => {
  it("is google.rpc.Status as JSON: the code's number, the message, the details (none by default)", () => {
    assert.equal(
      statusJson(Code.NotFound, "token not found"),
      '{"code":5,"message":"token not found","details":[]}',
    );
    const detail = { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" };
    assert.deepEqual(JSON.parse(statusJson(Code.ResourceExhausted, 'say "slow"', [detail])), {
      code: 8,
      message: 'say "slow"',
      details: [detail],
    });
  });
});
