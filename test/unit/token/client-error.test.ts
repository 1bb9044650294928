import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { StoreError } from "../../../src/store/store-error.js";
import { clientErrorOf } from "../../../src/token/client-error.js";

describe("clientErrorOf", () => {
  it("a Redis that cannot answer: UNAVAILABLE, the Redis error kept as cause only", () => {
    const redisError = new Error("connect ECONNREFUSED 10.0.0.7:6379");
    const err = clientErrorOf(new StoreError("unavailable", { cause: redisError }));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(err.rawMessage, "Token store unavailable, try again");
    assert.equal(err.cause, redisError);
    assert.ok(!err.message.includes("10.0.0.7"));
  });

  it("a write the replicas did not confirm: UNAVAILABLE, asking for a retry", () => {
    const err = clientErrorOf(new StoreError("unconfirmed-write"));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(err.rawMessage, "Token store could not confirm the write, try again");
  });

  it("a command Redis refused for good: INTERNAL with a neutral message", () => {
    const reply = Object.assign(new Error("ERR Error running script secret-detail"), {
      name: "ReplyError",
    });
    const err = clientErrorOf(new StoreError("rejected", { cause: reply }));
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "Internal error");
    assert.equal(err.cause, reply);
  });

  it("a ConnectError is the service's own answer and passes as it is", () => {
    const own = new ConnectError("name: taken", Code.AlreadyExists);
    assert.equal(clientErrorOf(own), own);
  });

  it("anything else: INTERNAL, the original kept as cause", () => {
    const bug = new TypeError("x is undefined");
    const err = clientErrorOf(bug);
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "Internal error");
    assert.equal(err.cause, bug);
  });
});
