import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  CONNECT_REFUSED,
  EXPECTATION_FAILED,
  REQUEST_TIMEOUT,
  refusalAnswer,
  refusalOfClientError,
} from "../../../src/server/transport-answer.js";

describe("the transport's own refusals", () => {
  it("answer Node's HTTP/1 parser errors with the statuses Node itself would", () => {
    const byError = (code: string | undefined) => {
      const { status, code: rpcCode } = refusalOfClientError(code);
      return [status, rpcCode];
    };
    assert.deepEqual(byError("HPE_HEADER_OVERFLOW"), [431, Code.ResourceExhausted]);
    assert.deepEqual(byError("HPE_CHUNK_EXTENSIONS_OVERFLOW"), [413, Code.ResourceExhausted]);
    assert.deepEqual(byError("ERR_HTTP_REQUEST_TIMEOUT"), [408, Code.DeadlineExceeded]);
    assert.equal(refusalOfClientError("ERR_HTTP_REQUEST_TIMEOUT"), REQUEST_TIMEOUT);
  });

  it("answer any other parser error, or none named, 400 malformed", () => {
    for (const code of ["HPE_INVALID_METHOD", "HPE_INVALID_HEADER_TOKEN", undefined]) {
      assert.deepEqual(refusalOfClientError(code), {
        status: 400,
        code: Code.InvalidArgument,
        message: "malformed HTTP request",
      });
    }
  });

  it("refuse an Expect they cannot meet 417, and CONNECT 501 (no proxy)", () => {
    assert.equal(EXPECTATION_FAILED.status, 417);
    assert.equal(EXPECTATION_FAILED.code, Code.FailedPrecondition);
    assert.equal(CONNECT_REFUSED.status, 501);
    assert.equal(CONNECT_REFUSED.code, Code.Unimplemented);
    assert.match(CONNECT_REFUSED.message, /not a proxy/);
  });

  it("are answered in the service's JSON error shape with the request id", () => {
    assert.deepEqual(refusalAnswer(REQUEST_TIMEOUT, "id-7"), {
      status: 408,
      code: Code.DeadlineExceeded,
      message: "request not received in time",
      headers: { "x-request-id": "id-7" },
    });
  });
});
