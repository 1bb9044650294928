import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { httpStatusFromCode } from "../../../src/gateway/http-status.js";

describe("httpStatusFromCode", () => {
  const table: [Code, number][] = [
    [Code.Canceled, 499],
    [Code.Unknown, 500],
    [Code.InvalidArgument, 400],
    [Code.DeadlineExceeded, 504],
    [Code.NotFound, 404],
    [Code.AlreadyExists, 409],
    [Code.PermissionDenied, 403],
    [Code.ResourceExhausted, 429],
    [Code.FailedPrecondition, 400],
    [Code.Aborted, 409],
    [Code.OutOfRange, 400],
    [Code.Unimplemented, 501],
    [Code.Internal, 500],
    [Code.Unavailable, 503],
    [Code.DataLoss, 500],
    [Code.Unauthenticated, 401],
  ];
  for (const [code, status] of table) {
    it(`${Code[code]} → ${status}`, () => {
      assert.equal(httpStatusFromCode(code), status);
    });
  }
});
