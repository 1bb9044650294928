import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRequestSeries, createServiceMetrics } from "../../../src/metrics/service-metrics.js";

describe("createRequestSeries", () => {
  it("counts calls by method, protocol and code, and times them by method and protocol", async () => {
    const metrics = createServiceMetrics({ processMetrics: false });
    const seriesOf = createRequestSeries(metrics);
    const create = seriesOf("CreateToken", "grpc");
    create.calls("OK").inc();
    create.calls("OK").inc();
    create.calls("UNAVAILABLE").inc();
    create.duration.observe(0.001);
    seriesOf("CreateToken", "rest").calls("OK").inc();
    const requests = await metrics.requests.get();
    assert.deepEqual(
      requests.values.map((v) => [v.labels, v.value]),
      [
        [{ method: "CreateToken", protocol: "grpc", code: "OK" }, 2],
        [{ method: "CreateToken", protocol: "grpc", code: "UNAVAILABLE" }, 1],
        [{ method: "CreateToken", protocol: "rest", code: "OK" }, 1],
      ],
    );
    const durations = await metrics.requestDuration.get();
    const count = durations.values.find((v) => v.metricName?.endsWith("_count"));
    assert.deepEqual(count?.labels, { method: "CreateToken", protocol: "grpc" });
    assert.equal(count?.value, 1);
  });

  it("looks each series up once: the same objects for the same method and protocol", () => {
    const seriesOf = createRequestSeries(createServiceMetrics({ processMetrics: false }));
    const a = seriesOf("DeleteToken", "connect");
    assert.equal(seriesOf("DeleteToken", "connect"), a);
    assert.equal(a.calls("OK"), a.calls("OK"));
    assert.notEqual(seriesOf("DeleteToken", "grpc"), a);
  });
});
