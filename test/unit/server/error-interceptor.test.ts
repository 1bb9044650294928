import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "../../../src/gen/health/v1/health_pb.js";
import { errorInterceptor } from "../../../src/server/error-interceptor.js";
import { StoreError } from "../../../src/store/store-error.js";
import { connectError } from "../../support/connect-error.js";
import { callHealthCheck } from "../../support/health-check-call.js";

/** The error a client gets when Check throws `thrown` behind the interceptor. */
function failing(thrown: unknown): Promise<ConnectError> {
  return connectError(
    callHealthCheck({
      interceptors: [errorInterceptor()],
      check: () => {
        throw thrown;
      },
    }),
  );
}

describe("the error interceptor", () => {
  it("passes a call's answer through", async () => {
    const result = await callHealthCheck({
      interceptors: [errorInterceptor()],
      check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }),
    });
    assert.equal(result.message.status, HealthCheckResponse_ServingStatus.SERVING);
  });

  it("passes a ConnectError through as it is: the services' own answers", async () => {
    const refusal = new ConnectError("no such key", Code.NotFound);
    assert.equal(await failing(refusal), refusal);
  });

  it("answers a store failure by its kind, the Redis error kept only as the cause", async () => {
    const redisDown = new Error("connect ECONNREFUSED 10.0.0.7:6379");
    const err = await failing(new StoreError("unavailable", { cause: redisDown }));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(err.rawMessage, "Token store unavailable, try again");
    assert.equal(err.cause, redisDown);
  });

  it("answers anything else INTERNAL in neutral words, the original kept as the cause", async () => {
    const bug = new TypeError("cannot read properties of undefined (reading 'userId')");
    const err = await failing(bug);
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "Internal error");
    assert.doesNotMatch(err.message, /userId/);
    assert.equal(err.cause, bug);
  });
});
