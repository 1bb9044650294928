import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/config.js";

describe("parseConfig", () => {
  it("has the documented defaults", () => {
    assert.deepEqual(parseConfig({}), {
      host: "127.0.0.1",
      httpPort: 8080,
      grpcPort: 9090,
      redisUrl: undefined,
      tokenMaxLifetimeSeconds: 31_536_000,
      tokenMaxActivePerUser: 1000,
      tokenRateLimitPerMinute: 60,
      logLevel: "info",
    });
  });

  it("reads every variable", () => {
    const config = parseConfig({
      HOST: "0.0.0.0",
      HTTP_PORT: "80",
      GRPC_PORT: "0",
      REDIS_URL: "rediss://user:pw@redis.internal:6380/1",
      TOKEN_MAX_LIFETIME_SECONDS: "604800",
      TOKEN_MAX_ACTIVE_PER_USER: "10",
      TOKEN_RATE_LIMIT_PER_MINUTE: "600",
      LOG_LEVEL: "warn",
    });
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.httpPort, 80);
    assert.equal(config.grpcPort, 0);
    assert.equal(config.redisUrl, "rediss://user:pw@redis.internal:6380/1");
    assert.equal(config.tokenMaxLifetimeSeconds, 604_800);
    assert.equal(config.tokenMaxActivePerUser, 10);
    assert.equal(config.tokenRateLimitPerMinute, 600);
    assert.equal(config.logLevel, "warn");
  });

  for (const [name, value] of [
    ["HTTP_PORT", "http"],
    ["HTTP_PORT", "65536"],
    ["GRPC_PORT", "-1"],
    ["GRPC_PORT", "1.5"],
    ["TOKEN_MAX_LIFETIME_SECONDS", "0"],
    ["TOKEN_MAX_LIFETIME_SECONDS", "99999999999"],
    ["REDIS_URL", "localhost:6379"],
    ["LOG_LEVEL", "verbose"],
    ["TOKEN_MAX_ACTIVE_PER_USER", "0"],
    ["TOKEN_RATE_LIMIT_PER_MINUTE", "many"],
  ]) {
    it(`refuses ${name}=${value}, naming the variable`, () => {
      assert.throws(
        () => parseConfig({ [name]: value }),
        (err) => err instanceof ConfigError && err.message.startsWith(name),
      );
    });
  }
});
