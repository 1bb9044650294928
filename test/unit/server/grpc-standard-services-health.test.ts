import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { createHandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../../src/gen/health/v1/health_pb.js";
import { createGrpcHealth } from "../../../src/server/grpc-standard-services.js";

function watchContext() {
  return createHandlerContext({
    service: Health,
    method: Health.method.watch,
    protocolName: "grpc",
    requestMethod: "POST",
    url: "http://localhost/grpc.health.v1.Health/Watch",
  });
}

describe("grpc.health.v1 Watch", () => {
  it("on stop: NOT_SERVING at once, then the stream ends", async () => {
    const stopping = new AbortController();
    const health = createGrpcHealth({
      ready: async () => (stopping.signal.aborted ? "not ready" : "ready"),
      services: [],
      stopping: stopping.signal,
      // Long enough that only the stop can wake the stream within the test.
      watchIntervalMs: 60_000,
    });
    const stream = health.watch(create(HealthCheckRequestSchema, { service: "" }), watchContext());
    const iterator = stream[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.status, ServingStatus.SERVING);
    const started = performance.now();
    stopping.abort();
    assert.equal((await iterator.next()).value?.status, ServingStatus.NOT_SERVING);
    assert.equal((await iterator.next()).done, true);
    assert.ok(performance.now() - started < 1000, "not after the watch interval");
  });

  it("a stream opened while stopping says NOT_SERVING and ends", async () => {
    const stopping = new AbortController();
    stopping.abort();
    const health = createGrpcHealth({
      ready: async () => "not ready",
      services: [],
      stopping: stopping.signal,
    });
    const statuses = [];
    for await (const message of health.watch(
      create(HealthCheckRequestSchema, { service: "" }),
      watchContext(),
    )) {
      statuses.push(message.status);
    }
    assert.deepEqual(statuses, [ServingStatus.NOT_SERVING]);
  });
});
