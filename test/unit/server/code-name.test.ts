import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { codeName } from "../../../src/server/code-name.js";

describe("codeName", () => {
  it("names every code as the Connect protocol does", () => {
    const codes = Object.values(Code).filter((value): value is Code => typeof value === "number");
    assert.equal(codes.length, 16);
    for (const code of codes) {
      assert.equal(codeName(code), codeToString(code), `code ${code}`);
    }
    assert.equal(codeName(Code.InvalidArgument), "invalid_argument");
    assert.equal(codeName(Code.Canceled), "canceled");
  });
});
