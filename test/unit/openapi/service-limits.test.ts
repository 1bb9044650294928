import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SETTING_DEFAULTS } from "../../../src/config/config.js";
import { DEFAULT_SERVICE_LIMITS, sameLimits } from "../../../src/openapi/service-limits.js";

describe("DEFAULT_SERVICE_LIMITS", () => {
  it("are the limits of the configuration without any variable set", () => {
    assert.deepEqual(DEFAULT_SERVICE_LIMITS, {
      // One year: TOKEN_MAX_LIFETIME_SECONDS' default, which SETTING_DEFAULTS does not hold.
      maxLifetimeSeconds: 31_536_000,
      rateLimitPerMinute: SETTING_DEFAULTS.tokenRateLimitPerMinute,
      maxActivePerUser: SETTING_DEFAULTS.tokenMaxActivePerUser,
    });
  });
});

describe("sameLimits", () => {
  const limits = { maxLifetimeSeconds: 3600, rateLimitPerMinute: 5, maxActivePerUser: 7 };

  it("is true for equal limits, whatever the objects", () => {
    assert.equal(sameLimits(limits, { ...limits }), true);
    assert.equal(sameLimits(DEFAULT_SERVICE_LIMITS, { ...DEFAULT_SERVICE_LIMITS }), true);
  });

  it("is false when any one limit differs", () => {
    assert.equal(sameLimits(limits, { ...limits, maxLifetimeSeconds: 3601 }), false);
    assert.equal(sameLimits(limits, { ...limits, rateLimitPerMinute: 6 }), false);
    assert.equal(sameLimits(limits, { ...limits, maxActivePerUser: 8 }), false);
  });
});
