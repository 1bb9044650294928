import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { invalidArgument, RestError } from "../../../src/rest/rest-error.js";

describe("RestError", () => {
  it("answers the HTTP status of its gRPC code unless told another", () => {
    const statuses = [
      [Code.InvalidArgument, 400],
      [Code.Unauthenticated, 401],
      [Code.PermissionDenied, 403],
      [Code.NotFound, 404],
      [Code.AlreadyExists, 409],
      [Code.ResourceExhausted, 429],
      [Code.Internal, 500],
      [Code.Unavailable, 503],
    ] as const;
    for (const [code, status] of statuses) {
      assert.equal(new RestError(code, "m").httpStatus, status, Code[code]);
    }
    assert.equal(new RestError(Code.Unimplemented, "m", { httpStatus: 405 }).httpStatus, 405);
  });

  it("defaults to no headers, no details, and a refusal of the gateway's own", () => {
    const e = new RestError(Code.NotFound, "no such path");
    assert.ok(e instanceof Error);
    assert.equal(e.name, "RestError");
    assert.equal(e.message, "no such path");
    assert.equal(e.code, Code.NotFound);
    assert.deepEqual(e.headers, {});
    assert.deepEqual(e.details, []);
    assert.equal(e.ofCall, false);
  });

  it("keeps the headers, details and call origin it is given", () => {
    const details = [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" }];
    const e = new RestError(Code.ResourceExhausted, "slow down", {
      headers: { "retry-after": "3" },
      details,
      ofCall: true,
    });
    assert.equal(e.httpStatus, 429);
    assert.deepEqual(e.headers, { "retry-after": "3" });
    assert.deepEqual(e.details, details);
    assert.equal(e.ofCall, true);
  });
});

describe("invalidArgument", () => {
  it("is a 400 INVALID_ARGUMENT refusal of the gateway with the message", () => {
    const e = invalidArgument("shelf: must be given once");
    assert.ok(e instanceof RestError);
    assert.deepEqual(
      [e.code, e.httpStatus, e.message, e.ofCall, e.headers, e.details],
      [Code.InvalidArgument, 400, "shelf: must be given once", false, {}, []],
    );
  });
});
