import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { createLogger } from "../../../src/log/logger.js";
import { createServiceMetrics } from "../../../src/metrics/service-metrics.js";
import { createAnswerTelemetry } from "../../../src/server/answer-telemetry.js";
import { createForwardAuthEndpoint } from "../../../src/server/forward-auth-endpoint.js";
import { askEndpoints } from "../../../src/server/listener-handler.js";
import { StoreError } from "../../../src/store/store-error.js";
import { DEFAULT_GRANTS } from "../../../src/store/token-grants.js";
import type {
  BearerAuthenticator,
  BearerIdentity,
} from "../../../src/token/bearer-authenticator.js";
import { samples } from "../../support/prometheus-samples.js";

const IDENTITY: BearerIdentity = {
  userId: "0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e",
  tokenId: "AAAAAAAAAAAAAAAA",
  name: "",
  expiresAtMs: Date.now() + 60_000,
  grants: DEFAULT_GRANTS,
};

describe("forward-auth endpoint", () => {
  const metrics = createServiceMetrics({ processMetrics: false });
  const seen: string[] = [];
  // What the authenticator does with the next token: answer, refuse, fail like a bug or like Redis.
  let behaviour: "live" | "not-live" | "bug" | "store-down" = "live";
  const authenticator: BearerAuthenticator = {
    used: () => undefined,
    async authenticate(token) {
      seen.push(token);
      if (behaviour === "bug") {
        throw new Error("ECONNRESET 10.0.0.7:6379 secret-internal-detail");
      }
      if (behaviour === "store-down") {
        throw new StoreError("unavailable", { cause: new Error("ECONNREFUSED 10.0.0.7:6379") });
      }
      return behaviour === "live" ? IDENTITY : undefined;
    },
  };
  // Asked as the listener asks it, which labels its answers.
  const endpoint = askEndpoints([createForwardAuthEndpoint({ authenticator })]);
  // Counted by the listener's telemetry, as in the service.
  const telemetry = createAnswerTelemetry({
    logger: createLogger({ destination: new PassThrough() }),
    metrics,
  });
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer(
      telemetry.wrap((req, res) => {
        if (!endpoint(req, res)) {
          res.writeHead(404);
          res.end();
        }
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (path: string, authorization?: string) =>
    fetch(`${base}${path}`, {
      headers: authorization === undefined ? {} : { authorization },
    });

  it("serves /auth and paths under /auth/ only, whatever the query", async () => {
    behaviour = "live";
    for (const path of ["/auth", "/auth/", "/auth/a/b", "/auth?x=/y", "/auth/?", "/auth/%2F"]) {
      const res = await get(path, "Bearer t");
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("x-user-id"), IDENTITY.userId);
      assert.equal(res.headers.get("x-token-id"), IDENTITY.tokenId);
      assert.equal(await res.text(), "");
    }
    for (const path of [
      "/",
      "/authx",
      "/auth-z",
      "/Auth",
      "/AUTH/x",
      "/x/auth",
      "/authorize?/auth",
    ]) {
      const res = await get(path, "Bearer t");
      assert.equal(res.status, 404, path);
      await res.arrayBuffer();
    }
  });

  it("asks the authenticator only for a Bearer token, and only its token", async () => {
    seen.length = 0;
    for (const authorization of [undefined, "Basic dTpw", "Bearerx"]) {
      const res = await get("/auth", authorization);
      assert.equal(res.status, 401);
      await res.arrayBuffer();
    }
    assert.deepEqual(seen, []);
    await (await get("/auth", "Bearer  abc.def")).arrayBuffer();
    assert.deepEqual(seen, ["abc.def"]);
    // The Bearer scheme with nothing after it presents an empty (invalid) token.
    await (await get("/auth", "Bearer")).arrayBuffer();
    assert.deepEqual(seen, ["abc.def", ""]);
  });

  it("an unexpected failure answers 500 Internal error without its details, and is counted", async () => {
    behaviour = "bug";
    const res = await get("/auth", "Bearer t");
    const text = await res.text();
    assert.equal(res.status, 500);
    assert.deepEqual(JSON.parse(text), { code: 13, message: "Internal error", details: [] });
    assert.ok(!text.includes("secret-internal-detail"));
    assert.equal(res.headers.get("x-user-id"), null);
    const counted = samples(await metrics.registry.metrics());
    assert.equal(
      counted.get(
        'perps_token_requests_total{method="forward-auth",protocol="http",code="internal"}',
      ),
      1,
    );
  });

  it("a store that cannot answer: 503 Token store unavailable, without its details", async () => {
    behaviour = "store-down";
    const res = await get("/auth", "Bearer t");
    const text = await res.text();
    assert.equal(res.status, 503);
    assert.deepEqual(JSON.parse(text), {
      code: 14,
      message: "Token store unavailable, try again",
      details: [],
    });
    assert.ok(!text.includes("10.0.0.7"));
    const counted = samples(await metrics.registry.metrics());
    assert.equal(
      counted.get(
        'perps_token_requests_total{method="forward-auth",protocol="http",code="unavailable"}',
      ),
      1,
    );
  });
});
