import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "../../../src/gen/health/v1/health_pb.js";
import { Exchange, exchangeKey } from "../../../src/server/exchange.js";
import { callOutcomeInterceptor } from "../../../src/server/interceptor-chain.js";
import { StoreError } from "../../../src/store/store-error.js";
import { connectError } from "../../support/connect-error.js";
import { callHealthCheck } from "../../support/health-check-call.js";

/** A Check call whose implementation throws `thrown` (or answers, for undefined), on `exchange`. */
async function called(exchange: Exchange | undefined, thrown?: unknown) {
  const contextValues = createContextValues();
  if (exchange !== undefined) {
    contextValues.set(exchangeKey, exchange);
  }
  const call = callHealthCheck({
    interceptors: [callOutcomeInterceptor()],
    contextValues,
    check: () => {
      if (thrown !== undefined) {
        throw thrown;
      }
      return { status: HealthCheckResponse_ServingStatus.SERVING };
    },
  });
  return thrown === undefined ? { result: await call } : { error: await connectError(call) };
}

describe("the call outcome interceptor", () => {
  it("passes a call's answer through, and notes nothing of it", async () => {
    const exchange = new Exchange("id", 0);
    const { result } = await called(exchange);
    assert.equal(result?.message.status, HealthCheckResponse_ServingStatus.SERVING);
    assert.equal(exchange.code, undefined);
    assert.equal(exchange.message, "");
  });

  it("passes a ConnectError through as it is, noting the code and words the client gets", async () => {
    const exchange = new Exchange("id", 0);
    const refusal = new ConnectError("no such key", Code.NotFound);
    const { error } = await called(exchange, refusal);
    assert.equal(error, refusal);
    assert.equal(exchange.code, Code.NotFound);
    assert.equal(exchange.message, "no such key");
  });

  it("answers a store failure by its kind, the Redis error kept as the cause and logged, never sent", async () => {
    const exchange = new Exchange("id", 0);
    const redisDown = new Error("connect ECONNREFUSED 10.0.0.7:6379");
    const { error } = await called(exchange, new StoreError("unavailable", { cause: redisDown }));
    assert.equal(error?.code, Code.Unavailable);
    assert.equal(error?.rawMessage, "Token store unavailable, try again");
    assert.equal(error?.cause, redisDown);
    assert.equal(exchange.code, Code.Unavailable);
    assert.equal(exchange.message, String(redisDown));
  });

  it("answers anything else INTERNAL in neutral words, the original kept as the cause", async () => {
    const exchange = new Exchange("id", 0);
    const bug = new TypeError("cannot read properties of undefined (reading 'userId')");
    const { error } = await called(exchange, bug);
    assert.equal(error?.code, Code.Internal);
    assert.equal(error?.rawMessage, "Internal error");
    assert.doesNotMatch(error?.message ?? "", /userId/);
    assert.equal(error?.cause, bug);
    assert.equal(exchange.code, Code.Internal);
    assert.match(exchange.message, /reading 'userId'/);
  });

  it("lets a call outside a listener's exchange fail as it does", async () => {
    const { error } = await called(undefined, new ConnectError("no", Code.PermissionDenied));
    assert.equal(error?.code, Code.PermissionDenied);
  });
});
