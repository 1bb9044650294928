import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { Exchange } from "../../../src/server/exchange.js";

describe("an exchange", () => {
  it("starts as a plain HTTP request with no outcome, not sent", () => {
    const exchange = new Exchange("id-1", 12.5);
    assert.equal(exchange.requestId, "id-1");
    assert.equal(exchange.started, 12.5);
    assert.equal(exchange.method, "http");
    assert.equal(exchange.protocol, "http");
    assert.equal(exchange.code, undefined);
    assert.equal(exchange.complete, false);
    assert.equal(exchange.probe, false);
  });

  it("records what each writer says: the call's name, the outcome, the probe, the answer sent", () => {
    const exchange = new Exchange("id-2", 0);
    exchange.nameCall("perps.token.v1.TokenService/CreateToken", "rest");
    assert.equal(exchange.method, "perps.token.v1.TokenService/CreateToken");
    assert.equal(exchange.protocol, "rest");
    // A label without a protocol keeps the one known.
    exchange.nameCall("forward-auth");
    assert.equal(exchange.method, "forward-auth");
    assert.equal(exchange.protocol, "rest");
    exchange.recordOutcome(Code.InvalidArgument, "bad name");
    assert.equal(exchange.code, Code.InvalidArgument);
    assert.equal(exchange.message, "bad name");
    exchange.markProbe();
    assert.equal(exchange.probe, true);
    exchange.recordSent(400);
    assert.equal(exchange.status, 400);
    assert.equal(exchange.complete, true);
  });
});
