import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../../src/config/config-error.js";
import { tracingConfig } from "../../../src/config/tracing-config.js";

describe("tracing config (the standard OTEL_* variables)", () => {
  it("is off without an OTLP endpoint, or when disabled", () => {
    assert.equal(tracingConfig({}), undefined);
    assert.equal(tracingConfig({ OTEL_SERVICE_NAME: "x" }), undefined);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    assert.equal(tracingConfig({ ...endpoint, OTEL_SDK_DISABLED: "true" }), undefined);
    assert.equal(tracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }), undefined);
  });

  it("reads the endpoint, headers, resource, sampler and batch delay", () => {
    assert.deepEqual(
      tracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Basic%20abc, x-tenant=perps",
        OTEL_SERVICE_NAME: "tokens",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_BSP_SCHEDULE_DELAY: "1000",
      }),
      {
        url: "http://collector:4318/v1/traces",
        headers: { authorization: "Basic abc", "x-tenant": "perps" },
        serviceName: "tokens",
        resourceAttributes: { "deployment.environment": "prod" },
        sampler: "parentbased_traceidratio",
        samplerRatio: 0.25,
        scheduleDelayMs: 1000,
        trustedListeners: ["internal"],
      },
    );
  });

  it("takes the traces endpoint as it is, with defaults for the rest", () => {
    assert.deepEqual(
      tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://c.example/otlp/traces" }),
      {
        url: "https://c.example/otlp/traces",
        headers: {},
        serviceName: "perps-token-service",
        resourceAttributes: {},
        sampler: "parentbased_always_on",
        samplerRatio: 1,
        scheduleDelayMs: 5000,
        trustedListeners: ["internal"],
      },
    );
  });

  for (const [name, value] of [
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"],
    ["OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"],
    ["OTEL_TRACES_EXPORTER", "zipkin"],
    ["OTEL_TRACES_SAMPLER", "sometimes"],
    ["OTEL_TRACES_SAMPLER_ARG", "1.5"],
    ["OTEL_BSP_SCHEDULE_DELAY", "soon"],
    ["OTEL_EXPORTER_OTLP_HEADERS", "novalue"],
    ["TRACE_TRUSTED_LISTENERS", "edge"],
    ["TRACE_TRUSTED_LISTENERS", "public,nobody"],
  ] as const) {
    it(`refuses ${name}=${value}, naming it`, () => {
      assert.throws(
        () =>
          tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", [name]: value }),
        (err) => err instanceof ConfigError && err.message.startsWith(name),
      );
    });
  }

  // Issue 34, item 7: these errors quoted the collector's password and API key.
  it("never quotes a header's text or an endpoint's credentials in an error", () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "user:s3cret@collector:4318" },
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        /got "\[redacted\]@collector:4318"/,
      ],
      [
        { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://user:s3cret@collector/v1/traces" },
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        /got "ftp:\/\/\[redacted\]@collector\/v1\/traces"/,
      ],
      [
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=perps,authorization Bearer s3cret",
        },
        "OTEL_EXPORTER_OTLP_HEADERS",
        /got entry 2 \(its text is not shown/,
      ],
      [
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_EXPORTER_OTLP_TRACES_HEADERS: "api-key=s3cret%zz",
        },
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        /the value of "api-key" is not valid percent-encoding/,
      ],
    ];
    for (const [env, name, message] of cases) {
      assert.throws(
        () => tracingConfig(env),
        (err) =>
          err instanceof ConfigError &&
          err.message.startsWith(name) &&
          message.test(err.message) &&
          !err.message.includes("s3cret"),
        JSON.stringify(env),
      );
    }
  });

  it("reads TRACE_TRUSTED_LISTENERS: internal by default, none, or a list; checked even while off", () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    const trusted = (value?: string) =>
      tracingConfig({ ...on, ...(value === undefined ? {} : { TRACE_TRUSTED_LISTENERS: value }) })
        ?.trustedListeners;
    assert.deepEqual(trusted(), ["internal"]);
    assert.deepEqual(trusted("none"), []);
    assert.deepEqual(trusted("public"), ["public"]);
    assert.deepEqual(trusted("internal, public"), ["public", "internal"]);
    assert.throws(() => tracingConfig({ TRACE_TRUSTED_LISTENERS: "all" }), ConfigError);
  });
});
