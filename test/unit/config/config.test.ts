import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/config.js";

describe("parseConfig", () => {
  it("has the documented defaults", () => {
    assert.deepEqual(parseConfig({}), {
      host: "127.0.0.1",
      internalHost: "127.0.0.1",
      httpPort: 8080,
      grpcPort: 9090,
      redis: undefined,
      redisMinReplicasAck: 0,
      redisWaitTimeoutMs: 500,
      embeddedRedisDir: ".data/redis",
      workers: 1,
      tls: undefined,
      tokenMaxLifetimeSeconds: 31_536_000,
      tokenMaxActivePerUser: 1000,
      tokenRateLimitPerMinute: 60,
      requestTimeoutMs: 30_000,
      maxConnectionsPerListener: 4096,
      logLevel: "info",
      console: true,
    });
  });

  it("reads every variable", () => {
    const config = parseConfig({
      HOST: "0.0.0.0",
      INTERNAL_HOST: "10.1.2.3",
      EMBEDDED_REDIS_DIR: "/var/lib/perps/redis",
      HTTP_PORT: "80",
      GRPC_PORT: "0",
      REDIS_URL: "rediss://user:pw@redis.internal:6380/1",
      TOKEN_MAX_LIFETIME_SECONDS: "604800",
      TOKEN_MAX_ACTIVE_PER_USER: "10",
      TOKEN_RATE_LIMIT_PER_MINUTE: "600",
      REQUEST_TIMEOUT_MS: "1500",
      MAX_CONNECTIONS_PER_LISTENER: "100",
      LOG_LEVEL: "warn",
      CONSOLE: "off",
    });
    assert.equal(config.console, false);
    assert.equal(parseConfig({ CONSOLE: "on" }).console, true);
    assert.equal(config.requestTimeoutMs, 1500);
    assert.equal(config.maxConnectionsPerListener, 100);
    assert.equal(config.host, "0.0.0.0");
    // HOST binds the public listener only: the internal one stays where INTERNAL_HOST says.
    assert.equal(config.internalHost, "10.1.2.3");
    assert.equal(parseConfig({ HOST: "0.0.0.0" }).internalHost, "127.0.0.1");
    assert.equal(config.embeddedRedisDir, "/var/lib/perps/redis");
    assert.equal(config.httpPort, 80);
    assert.equal(config.grpcPort, 0);
    assert.deepEqual(config.redis, { kind: "url", url: "rediss://user:pw@redis.internal:6380/1" });
    assert.equal(config.tokenMaxLifetimeSeconds, 604_800);
    assert.equal(config.tokenMaxActivePerUser, 10);
    assert.equal(config.tokenRateLimitPerMinute, 600);
    assert.equal(config.logLevel, "warn");
  });

  it("reads the other Redis shapes", () => {
    assert.deepEqual(parseConfig({ REDIS_URL: "unix:///run/redis.sock" }).redis, {
      kind: "socket",
      path: "/run/redis.sock",
    });
    assert.deepEqual(
      parseConfig({ REDIS_CLUSTER_NODES: "10.0.0.1:7000, redis-b:7001", REDIS_PASSWORD: "pw" })
        .redis,
      {
        kind: "cluster",
        nodes: [
          { host: "10.0.0.1", port: 7000 },
          { host: "redis-b", port: 7001 },
        ],
        password: "pw",
      },
    );
    assert.deepEqual(
      parseConfig({
        REDIS_SENTINELS: "s1:26379,s2:26379",
        REDIS_SENTINEL_NAME: "main",
        REDIS_TLS: "true",
      }).redis,
      {
        kind: "sentinel",
        sentinels: [
          { host: "s1", port: 26379 },
          { host: "s2", port: 26379 },
        ],
        name: "main",
        tls: true,
      },
    );
    const scale = parseConfig({
      WORKERS: "4",
      REDIS_MIN_REPLICAS_ACK: "1",
      REDIS_WAIT_TIMEOUT_MS: "250",
    });
    assert.equal(scale.workers, 4);
    assert.equal(scale.redisMinReplicasAck, 1);
    assert.equal(scale.redisWaitTimeoutMs, 250);
  });

  it("needs REDIS_SENTINEL_NAME with REDIS_SENTINELS", () => {
    assert.throws(
      () => parseConfig({ REDIS_SENTINELS: "s1:26379" }),
      (err) => err instanceof ConfigError && err.message.startsWith("REDIS_SENTINEL_NAME"),
    );
  });

  it("refuses two Redis shapes at once", () => {
    assert.throws(
      () => parseConfig({ REDIS_URL: "redis://a", REDIS_CLUSTER_NODES: "b:1" }),
      (err) => err instanceof ConfigError && /alternatives/.test(err.message),
    );
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
    ["REDIS_URL", "unix://relative.sock"],
    ["REDIS_CLUSTER_NODES", "host-without-port"],
    ["REDIS_SENTINELS", "s1"],
    ["REDIS_TLS", "maybe"],
    ["WORKERS", "0"],
    ["TLS_CERT_FILE", "cert.pem"],
    ["REDIS_MIN_REPLICAS_ACK", "-1"],
    ["REQUEST_TIMEOUT_MS", "99"],
    ["REQUEST_TIMEOUT_MS", "30s"],
    ["MAX_CONNECTIONS_PER_LISTENER", "0"],
    ["CONSOLE", "false"],
  ]) {
    it(`refuses ${name}=${value}, naming the variable`, () => {
      assert.throws(
        () => parseConfig({ [name]: value }),
        (err) => err instanceof ConfigError && err.message.startsWith(name),
      );
    });
  }
});
