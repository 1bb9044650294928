import { redactedUrl } from "../log/redacted-url.js";
import { ConfigError } from "./config-error.js";

/** The samplers of the OTEL_TRACES_SAMPLER variable that the service supports. */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** The listeners TRACE_TRUSTED_LISTENERS may name. */
const LISTENERS = ["public", "internal"] as const;

/** OpenTelemetry tracing, from the standard OTEL_* variables. */
export interface TracingConfig {
  /**
   * Where spans are sent, OTLP over HTTP/protobuf:
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
   * OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces`.
   */
  url: string;
  /** OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS: `key=value,…`. */
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME. Default perps-token-service. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value,…`. */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER. Default parentbased_always_on. */
  sampler: SamplerName;
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers, 0 to 1. Default 1. */
  samplerRatio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: ms between two exports. Default 5000. */
  scheduleDelayMs: number;
  /**
   * TRACE_TRUSTED_LISTENERS: the listeners whose callers' trace context is
   * continued (their sampled flag and `tracestate` included). A call on any
   * other starts a trace of its own, linked to the caller's. Default
   * internal: its callers are the platform's services.
   */
  trustedListeners: (typeof LISTENERS)[number][];
}

function trustedListeners(raw: string | undefined): (typeof LISTENERS)[number][] {
  if (raw === undefined) {
    return ["internal"];
  }
  if (raw === "none") {
    return [];
  }
  const names = raw.split(",").map((name) => name.trim());
  const listed = LISTENERS.filter((listener) => names.includes(listener));
  if (listed.length !== names.length) {
    throw new ConfigError(
      `TRACE_TRUSTED_LISTENERS must be none or a comma-separated list of public and internal, got "${raw}"`,
    );
  }
  return listed;
}

/**
 * `key=value,…` as the OTEL_* variables write lists (values percent-decoded).
 * With `secret` (the exporter's headers, which carry collectors' API keys) an
 * error names the entry by its position and key, never its text.
 */
function keyValues(name: string, raw: string | undefined, secret: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const items = (raw ?? "").split(",");
  for (const [index, item] of items.entries()) {
    if (item.trim() === "") {
      continue;
    }
    const eq = item.indexOf("=");
    const shown = secret
      ? `entry ${index + 1} (its text is not shown: it may hold a secret)`
      : `"${item}"`;
    if (eq <= 0) {
      throw new ConfigError(`${name} must be a comma-separated list of key=value, got ${shown}`);
    }
    const key = item.slice(0, eq).trim();
    try {
      out[key] = decodeURIComponent(item.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(
        `${name}: the value of ${secret ? `"${key}"` : shown} is not valid percent-encoding`,
      );
    }
  }
  return out;
}

function url(name: string, raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new Error("not http");
    }
    return raw;
  } catch {
    // A collector's password or key may be in the URL: never echoed.
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${redactedUrl(raw)}"`);
  }
}

/**
 * Tracing as the standard OTEL_* variables configure it; undefined (off)
 * unless an OTLP endpoint is set, or when OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. Only OTLP over HTTP/protobuf is served.
 */
export function tracingConfig(env: Record<string, string | undefined>): TracingConfig | undefined {
  const set = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const exporter = set("OTEL_TRACES_EXPORTER") ?? "otlp";
  if (exporter !== "otlp" && exporter !== "none") {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  }
  // Checked even while tracing is off: a typo must not wait for the day it is turned on.
  const trusted = trustedListeners(set("TRACE_TRUSTED_LISTENERS"));
  const tracesEndpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (
    set("OTEL_SDK_DISABLED") === "true" ||
    exporter === "none" ||
    (tracesEndpoint === undefined && endpoint === undefined)
  ) {
    return undefined;
  }
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const protocol = set(name);
    if (protocol !== undefined && protocol !== "http/protobuf") {
      throw new ConfigError(`${name}: only http/protobuf is served, got "${protocol}"`);
    }
  }
  const sampler = set("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  if (!(SAMPLERS as readonly string[]).includes(sampler)) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, got "${sampler}"`,
    );
  }
  const ratioText = set("OTEL_TRACES_SAMPLER_ARG") ?? "1";
  const samplerRatio = Number(ratioText);
  if (!/^\d*\.?\d+$/.test(ratioText) || samplerRatio > 1) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${ratioText}"`,
    );
  }
  const delayText = set("OTEL_BSP_SCHEDULE_DELAY") ?? "5000";
  if (!/^\d{1,7}$/.test(delayText)) {
    throw new ConfigError(`OTEL_BSP_SCHEDULE_DELAY must be whole milliseconds, got "${delayText}"`);
  }
  return {
    url:
      tracesEndpoint === undefined
        ? `${url("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint ?? "").replace(/\/$/, "")}/v1/traces`
        : url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint),
    headers: keyValues(
      set("OTEL_EXPORTER_OTLP_TRACES_HEADERS") === undefined
        ? "OTEL_EXPORTER_OTLP_HEADERS"
        : "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
      set("OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? set("OTEL_EXPORTER_OTLP_HEADERS"),
      true,
    ),
    serviceName: set("OTEL_SERVICE_NAME") ?? "perps-token-service",
    resourceAttributes: keyValues(
      "OTEL_RESOURCE_ATTRIBUTES",
      set("OTEL_RESOURCE_ATTRIBUTES"),
      false,
    ),
    sampler: sampler as SamplerName,
    samplerRatio,
    scheduleDelayMs: Number(delayText),
    trustedListeners: trusted,
  };
}
