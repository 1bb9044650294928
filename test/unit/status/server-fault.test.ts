import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { isServerFault, loggedMessage } from "../../../src/status/server-fault.js";

describe("whether a failure is ours", () => {
  it("is ours for INTERNAL, UNKNOWN, UNAVAILABLE and DATA_LOSS, the caller's for every other code", () => {
    const ours = [Code.Internal, Code.Unknown, Code.Unavailable, Code.DataLoss];
    for (const code of Object.values(Code).filter((c): c is Code => typeof c === "number")) {
      assert.equal(isServerFault(code), ours.includes(code), Code[code]);
    }
  });

  it("logs our failure's cause, never sent, and the caller's error as the caller was told", () => {
    const cause = new Error("ECONNREFUSED 10.0.0.7:6379");
    assert.equal(
      loggedMessage(
        new ConnectError("Token store unavailable", Code.Unavailable, undefined, undefined, cause),
      ),
      String(cause),
    );
    // Ours without a cause: what it says.
    assert.equal(
      loggedMessage(new ConnectError("internal error", Code.Internal)),
      "internal error",
    );
    // The caller's: what the caller was told, even with a cause.
    assert.equal(
      loggedMessage(
        new ConnectError("bad name", Code.InvalidArgument, undefined, undefined, cause),
      ),
      "bad name",
    );
  });
});
