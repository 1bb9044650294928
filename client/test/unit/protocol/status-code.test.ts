import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { connectCodeName, grpcCodeName, isErrorCode } from "../../../src/protocol/status-code.js";

const CODES = Object.values(Code).filter((value): value is Code => typeof value === "number");

describe("grpcCodeName", () => {
  it("names every code as gRPC does", () => {
    assert.equal(CODES.length, 16);
    assert.equal(grpcCodeName(Code.AlreadyExists), "ALREADY_EXISTS");
    assert.equal(grpcCodeName(Code.Canceled), "CANCELLED");
    assert.equal(grpcCodeName(Code.Unauthenticated), "UNAUTHENTICATED");
    for (const code of CODES) {
      assert.match(grpcCodeName(code), /^[A-Z]+(?:_[A-Z]+)*$/, `code ${code}`);
    }
    assert.equal(new Set(CODES.map(grpcCodeName)).size, 16);
  });

  it("names a number that is no code by its number", () => {
    assert.equal(grpcCodeName(99 as Code), "CODE_99");
  });
});

describe("connectCodeName", () => {
  it("names every code as the Connect protocol does", () => {
    for (const code of CODES) {
      assert.equal(connectCodeName(code), codeToString(code), `code ${code}`);
    }
    assert.equal(connectCodeName(Code.InvalidArgument), "invalid_argument");
    assert.equal(connectCodeName(Code.Canceled), "canceled");
  });

  it("names a number that is no code by its number", () => {
    assert.equal(connectCodeName(99 as Code), "99");
  });
});

describe("isErrorCode", () => {
  it("is true for the 16 codes only", () => {
    for (const code of CODES) {
      assert.equal(isErrorCode(code), true, `code ${code}`);
    }
    for (const value of [0, 17, 1.5, -1, "3", undefined, null]) {
      assert.equal(isErrorCode(value), false, String(value));
    }
  });
});
