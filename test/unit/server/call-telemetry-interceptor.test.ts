import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "../../../src/gen/health/v1/health_pb.js";
import { callTelemetryInterceptor } from "../../../src/server/call-telemetry-interceptor.js";
import { Exchange, exchangeKey } from "../../../src/server/exchange.js";
import { connectError } from "../../support/connect-error.js";
import { callHealthCheck } from "../../support/health-check-call.js";

/** A Check call whose implementation throws `thrown` (or answers, for undefined), on `exchange`. */
async function called(exchange: Exchange | undefined, thrown?: unknown) {
  const contextValues = createContextValues();
  if (exchange !== undefined) {
    contextValues.set(exchangeKey, exchange);
  }
  const call = callHealthCheck({
    interceptors: [callTelemetryInterceptor()],
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

describe("the call telemetry interceptor", () => {
  it("notes nothing of a call that succeeds", async () => {
    const exchange = new Exchange("id", 0);
    const { result } = await called(exchange);
    assert.equal(result?.message.status, HealthCheckResponse_ServingStatus.SERVING);
    assert.equal(exchange.code, undefined);
    assert.equal(exchange.message, "");
  });

  it("notes the code and words the client gets of a refusal, and passes the error on", async () => {
    const exchange = new Exchange("id", 0);
    const refusal = new ConnectError("no such key", Code.NotFound);
    const { error } = await called(exchange, refusal);
    assert.equal(error, refusal);
    assert.equal(exchange.code, Code.NotFound);
    assert.equal(exchange.message, "no such key");
  });

  it("notes our own failure's cause for the log, which the client is never sent", async () => {
    const exchange = new Exchange("id", 0);
    const cause = new Error("ECONNREFUSED 10.0.0.7:6379");
    const failure = new ConnectError(
      "Token store unavailable",
      Code.Unavailable,
      undefined,
      [],
      cause,
    );
    const { error } = await called(exchange, failure);
    assert.equal(error?.rawMessage, "Token store unavailable");
    assert.equal(exchange.code, Code.Unavailable);
    assert.equal(exchange.message, String(cause));
  });

  it("passes on what is not a ConnectError as a ConnectError (UNKNOWN), noted so", async () => {
    // In the chain the error interceptor, inside, has made it INTERNAL already.
    const exchange = new Exchange("id", 0);
    const { error } = await called(exchange, new Error("a bug"));
    assert.ok(error instanceof ConnectError);
    assert.equal(error.code, Code.Unknown);
    assert.equal(exchange.code, Code.Unknown);
    assert.equal(exchange.message, "Error: a bug");
  });

  it("lets a call outside a listener's exchange fail as it does", async () => {
    const { error } = await called(undefined, new ConnectError("no", Code.PermissionDenied));
    assert.equal(error?.code, Code.PermissionDenied);
  });
});
