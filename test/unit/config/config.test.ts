import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, hostFacts, parseConfig } from "../../../src/config/config.js";

const linux24 = { cores: 1, reusePortSupported: true };

describe("parseConfig", () => {
  it("has the documented defaults", () => {
    assert.deepEqual(parseConfig({}, linux24), {
      host: "127.0.0.1",
      internalHost: "127.0.0.1",
      publicPort: 8080,
      internalPort: 9090,
      oldNames: [],
      redis: undefined,
      redisMinReplicasAck: 0,
      redisRevokeReplicasAck: "auto",
      redisWaitTimeoutMs: 500,
      embeddedRedisDir: ".data/redis",
      workers: 1,
      reusePort: true,
      workerSemiSpaceMb: 0,
      tls: undefined,
      tokenMaxLifetimeSeconds: 31_536_000,
      tokenMaxActivePerUser: 1000,
      tokenRateLimitPerMinute: 60,
      tokenListRateLimitPerMinute: 120,
      tokenCacheMaxEntries: 100_000,
      lastUseFlushMs: 10_000,
      tokenCacheGraceMs: 3000,
      requestTimeoutMs: 30_000,
      answerTimeoutMs: 10_000,
      maxConnectionsPerListener: 4096,
      corsOrigins: [],
      logLevel: "info",
      console: true,
      tracing: undefined,
      adminCredentialsFile: undefined,
      serviceCredentialsFile: undefined,
      adminClientCaFile: undefined,
      internalHostnames: [],
    });
    assert.equal(
      parseConfig({ ADMIN_CREDENTIALS_FILE: "/etc/perps/operators" }).adminCredentialsFile,
      "/etc/perps/operators",
    );
    assert.throws(
      () => parseConfig({ ADMIN_CLIENT_CA_FILE: "/etc/perps/ca.pem" }),
      /ADMIN_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE/,
    );
    assert.equal(
      parseConfig({
        ADMIN_CLIENT_CA_FILE: "/etc/perps/ca.pem",
        TLS_CERT_FILE: "c.pem",
        TLS_KEY_FILE: "k.pem",
      }).adminClientCaFile,
      "/etc/perps/ca.pem",
    );
  });

  it("reads TOKEN_CACHE and TOKEN_CACHE_MAX_ENTRIES: off means no entries", () => {
    assert.equal(parseConfig({ TOKEN_CACHE_MAX_ENTRIES: "5000" }).tokenCacheMaxEntries, 5000);
    assert.equal(parseConfig({ TOKEN_CACHE: "off" }).tokenCacheMaxEntries, 0);
    assert.equal(
      parseConfig({ TOKEN_CACHE: "off", TOKEN_CACHE_MAX_ENTRIES: "5000" }).tokenCacheMaxEntries,
      0,
    );
    assert.throws(() => parseConfig({ TOKEN_CACHE: "maybe" }), /TOKEN_CACHE must be on or off/);
    assert.throws(
      () => parseConfig({ TOKEN_CACHE_MAX_ENTRIES: "0" }),
      /TOKEN_CACHE_MAX_ENTRIES must be an integer from 1 to 10000000/,
    );
  });

  it("reads CORS_ORIGINS: exact origins, comma-separated, spaces around them ignored", () => {
    assert.deepEqual(parseConfig({ CORS_ORIGINS: "" }).corsOrigins, []);
    assert.deepEqual(
      parseConfig({
        CORS_ORIGINS: "https://app.example.com, http://localhost:3000,https://[::1]:8443",
      }).corsOrigins,
      ["https://app.example.com", "http://localhost:3000", "https://[::1]:8443"],
    );
  });

  it("refuses a CORS_ORIGINS entry that is not an origin as a browser sends it, naming the variable", () => {
    for (const bad of [
      "*",
      "null",
      "app.example.com",
      "https://app.example.com/",
      "https://app.example.com/path",
      "https://App.Example.com",
      "https://app.example.com:443",
      "https://user@app.example.com",
      "https://app.example.com?x=1",
      "ftp://app.example.com",
      "https://a.example.com,,https://b.example.com",
      "https://a.example.com,",
    ]) {
      assert.throws(
        () => parseConfig({ CORS_ORIGINS: bad }),
        (err) => err instanceof ConfigError && /^CORS_ORIGINS must be /.test(err.message),
        bad,
      );
    }
  });

  it("reads every variable", () => {
    const config = parseConfig({
      HOST: "0.0.0.0",
      INTERNAL_HOST: "10.1.2.3",
      EMBEDDED_REDIS_DIR: "/var/lib/perps/redis",
      PUBLIC_PORT: "80",
      INTERNAL_PORT: "0",
      REDIS_URL: "rediss://user:pw@redis.internal:6380/1",
      TOKEN_MAX_LIFETIME_SECONDS: "604800",
      TOKEN_MAX_ACTIVE_PER_USER: "10",
      TOKEN_RATE_LIMIT_PER_MINUTE: "600",
      TOKEN_LIST_RATE_LIMIT_PER_MINUTE: "30",
      REQUEST_TIMEOUT_MS: "1500",
      ANSWER_TIMEOUT_MS: "2500",
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
    assert.equal(config.publicPort, 80);
    assert.equal(config.internalPort, 0);
    assert.deepEqual(config.redis, { kind: "url", url: "rediss://user:pw@redis.internal:6380/1" });
    assert.equal(config.tokenMaxLifetimeSeconds, 604_800);
    assert.equal(config.tokenMaxActivePerUser, 10);
    assert.equal(config.tokenRateLimitPerMinute, 600);
    assert.equal(config.tokenListRateLimitPerMinute, 30);
    assert.equal(config.answerTimeoutMs, 2500);
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
    assert.equal(parseConfig({ REUSE_PORT: "false" }, linux24).reusePort, false);
    assert.equal(parseConfig({ WORKER_SEMI_SPACE_MB: "16" }).workerSemiSpaceMb, 16);
    assert.equal(parseConfig({ WORKER_SEMI_SPACE_MB: "0" }).workerSemiSpaceMb, 0);
    assert.throws(() => parseConfig({ WORKER_SEMI_SPACE_MB: "1025" }), /WORKER_SEMI_SPACE_MB/);
    assert.throws(() => parseConfig({ WORKER_SEMI_SPACE_MB: "2MB" }), /WORKER_SEMI_SPACE_MB/);
    assert.equal(scale.redisMinReplicasAck, 1);
    assert.equal(scale.redisWaitTimeoutMs, 250);
  });

  it("reads REDIS_REVOKE_REPLICAS_ACK as auto or a count of replicas", () => {
    assert.equal(parseConfig({ REDIS_REVOKE_REPLICAS_ACK: "auto" }).redisRevokeReplicasAck, "auto");
    assert.equal(parseConfig({ REDIS_REVOKE_REPLICAS_ACK: "" }).redisRevokeReplicasAck, "auto");
    assert.equal(parseConfig({ REDIS_REVOKE_REPLICAS_ACK: "0" }).redisRevokeReplicasAck, 0);
    assert.equal(parseConfig({ REDIS_REVOKE_REPLICAS_ACK: "2" }).redisRevokeReplicasAck, 2);
    assert.equal(parseConfig({ REDIS_REVOKE_REPLICAS_ACK: "16" }).redisRevokeReplicasAck, 16);
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
    ["PUBLIC_PORT", "http"],
    ["PUBLIC_PORT", "65536"],
    ["INTERNAL_PORT", "-1"],
    ["INTERNAL_PORT", "1.5"],
    ["HTTP_PORT", "http"],
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
    ["REDIS_REVOKE_REPLICAS_ACK", "on"],
    ["REDIS_REVOKE_REPLICAS_ACK", "17"],
    ["REDIS_REVOKE_REPLICAS_ACK", "-1"],
    ["REDIS_REVOKE_REPLICAS_ACK", "AUTO"],
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

describe("a configuration with several bad variables", () => {
  it("names every one at once, in one ConfigError", () => {
    assert.throws(
      () =>
        parseConfig({
          PUBLIC_PORT: "eighty",
          LOG_LEVEL: "loud",
          REDIS_URL: "localhost:6379",
          CONSOLE: "maybe",
          TLS_CERT_FILE: "cert.pem",
        }),
      (err) =>
        err instanceof ConfigError &&
        err.problems.length === 5 &&
        /^PUBLIC_PORT must be /.test(err.problems[0] ?? "") &&
        err.problems.some((p) => p.startsWith("LOG_LEVEL must be one of")) &&
        err.problems.some((p) => p.startsWith("REDIS_URL must start with")) &&
        err.problems.some((p) => p.startsWith("CONSOLE must be on or off")) &&
        err.problems.some((p) => p.startsWith("TLS_CERT_FILE and TLS_KEY_FILE")) &&
        err.message === err.problems.join("\n"),
    );
  });
});

describe("defaults that follow the host", () => {
  it("runs one worker per core the process may use, as Go's GOMAXPROCS does", () => {
    assert.equal(parseConfig({}, { cores: 2, reusePortSupported: false }).workers, 2);
    assert.equal(parseConfig({}, { cores: 8, reusePortSupported: false }).workers, 8);
    assert.equal(parseConfig({ WORKERS: "1" }, { cores: 8, reusePortSupported: false }).workers, 1);
    assert.equal(parseConfig({}).workers, hostFacts().cores);
  });

  it("binds a socket per worker (SO_REUSEPORT) only where the runtime can", () => {
    const other = { cores: 2, reusePortSupported: false };
    assert.equal(parseConfig({}, other).reusePort, false);
    assert.equal(parseConfig({}, { cores: 2, reusePortSupported: true }).reusePort, true);
    assert.throws(() => parseConfig({ REUSE_PORT: "true" }, other), /REUSE_PORT needs Linux/);
    assert.throws(
      () => parseConfig({ REUSE_PORT: "yes" }, other),
      /REUSE_PORT must be true or false/,
    );
  });

  it("knows that Linux has reusePort, on every node the service runs on", () => {
    assert.equal(hostFacts().reusePortSupported, process.platform === "linux");
  });
});
