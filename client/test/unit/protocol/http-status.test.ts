import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { codeFromHttpStatus } from "@connectrpc/connect/protocol-connect";
import {
  connectCodeFromHttpStatus,
  httpStatusFromCode,
  restCodeFromHttpStatus,
} from "../../../src/protocol/http-status.js";

const CODES = Object.values(Code).filter((value): value is Code => typeof value === "number");

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

describe("restCodeFromHttpStatus", () => {
  it("is the inverse of httpStatusFromCode for every status that mapping answers", () => {
    for (const code of CODES) {
      const status = httpStatusFromCode(code);
      const back = restCodeFromHttpStatus(status);
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
    [408, Code.DeadlineExceeded],
    [413, Code.InvalidArgument],
    [415, Code.InvalidArgument],
    [418, Code.InvalidArgument],
    [503, Code.Unavailable],
    [505, Code.Unimplemented],
    [599, Code.Internal],
  ];
  for (const [status, code] of table) {
    it(`${status} → ${code === undefined ? "ok" : Code[code]}`, () => {
      assert.equal(restCodeFromHttpStatus(status), code);
    });
  }
});

describe("connectCodeFromHttpStatus", () => {
  it("is the Connect protocol's table, but for 408", () => {
    for (let status = 100; status < 600; status++) {
      if (status !== 408) {
        assert.equal(connectCodeFromHttpStatus(status), codeFromHttpStatus(status), `${status}`);
      }
    }
    assert.equal(connectCodeFromHttpStatus(408), Code.DeadlineExceeded);
  });
  const table: [number, Code][] = [
    [400, Code.Internal],
    [401, Code.Unauthenticated],
    [403, Code.PermissionDenied],
    [404, Code.Unimplemented],
    [429, Code.Unavailable],
    [500, Code.Unknown],
    [502, Code.Unavailable],
    [503, Code.Unavailable],
    [504, Code.Unavailable],
  ];
  for (const [status, code] of table) {
    it(`${status} → ${Code[code]}`, () => {
      assert.equal(connectCodeFromHttpStatus(status), code);
    });
  }
});
