import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { codeFromHttpStatus, httpStatusFromCode } from "../../../src/status/http-status.js";

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

describe("codeFromHttpStatus", () => {
  it("is the inverse of httpStatusFromCode for every status that mapping answers", () => {
    for (const code of Object.values(Code).filter((c) => typeof c === "number")) {
      const status = httpStatusFromCode(code);
      const back = codeFromHttpStatus(status);
      assert.ok(back !== undefined, `${status}`);
      assert.equal(httpStatusFromCode(back), status, `${Code[code]} → ${status} → ${Code[back]}`);
    }
  });
  const table: [number, Code | undefined][] = [
    [200, undefined],
    [201, undefined],
    [204, undefined],
    [304, undefined],
    [400, Code.InvalidArgument],
    [404, Code.NotFound],
    [405, Code.Unimplemented],
    [413, Code.InvalidArgument],
    [415, Code.InvalidArgument],
    [418, Code.InvalidArgument],
    [503, Code.Unavailable],
    [505, Code.Unimplemented],
    [599, Code.Internal],
  ];
  for (const [status, code] of table) {
    it(`${status} → ${code === undefined ? "ok" : Code[code]}`, () => {
      assert.equal(codeFromHttpStatus(status), code);
    });
  }
});
