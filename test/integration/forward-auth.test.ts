import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { connect as connectH2 } from "node:http2";
import { connect as connectTcp } from "node:net";
import { after, before, describe, it } from "node:test";
import { generateToken } from "@perps/token-client/protocol";
import {
  assertAllowed,
  assertRefused,
  bearer,
  type Created,
  createToken,
  deleteToken,
  forwardAuth,
  INVALID,
  MISSING,
  redisEnv,
  register,
  UUID,
} from "../support/forward-auth-calls.js";
import { killMainProcesses, type MainProcess, startMainProcess } from "../support/main-process.js";
import { samples } from "../support/prometheus-samples.js";
import { requestLines } from "../support/request-lines.js";
import { serviceSuite } from "../support/service-suite.js";
import { newUser, type TestUser } from "../support/signing.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { OWN_BOUND_MS, untilElapsed } from "../support/token-cache-checks.js";

// Forward-auth on the internal listener (`/auth`, `/auth/...`), for nginx
// auth_request, Traefik ForwardAuth and Envoy ext_authz: a live bearer token
// answers 200 with X-User-Id and X-Token-Id, anything else 401 with its
// WWW-Authenticate challenge, a Redis that cannot answer 503.

describe("forward-auth (/auth on the internal listener)", () => {
  let redis: TestRedis;
  let service: TestService;
  let second: MainProcess;
  let secondInternalUrl: string;
  let user: TestUser;
  let live: Created;
  // Every token a test used: none may reach a log.
  const used: string[] = [];

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
    // A second service process on the same Redis.
    second = startMainProcess({
      ...redisEnv(redis.topology),
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      TOKEN_RATE_LIMIT_PER_MINUTE: "100000",
    });
    const [match] = await second.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    secondInternalUrl = `http://127.0.0.1:${match?.[2]}`;
    user = await newUser();
    await register(service, user);
    live = await createToken(service.publicUrl, user, { name: "live" });
    used.push(live.token);
  });
  after(async () => {
    second.child.kill("SIGTERM");
    await second.exitedWithin(10_000).catch(() => killMainProcesses());
    await service.stop();
    await redis.dispose();
    const logs = service.logs.join("") + second.output();
    for (const token of used) {
      assert.ok(!logs.includes(token), "a token reached the log");
    }
  });

  it("a live token: 200, X-User-Id and X-Token-Id, empty body, on any method on /auth and under /auth/", async () => {
    for (const path of ["/auth", "/auth/", "/auth/some/path", "/auth?x=1", "/auth/api/v1?a=b"]) {
      for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]) {
        const answer = await forwardAuth(service.internalUrl, {
          path,
          method,
          authorization: bearer(live.token),
          ...(method === "POST" || method === "PUT" ? { body: '{"ignored":true}' } : {}),
        });
        assertAllowed(answer, user.userId, live.id);
        assert.match(answer.headers.get("x-user-id") ?? "", UUID);
      }
    }
    // The scheme is case-insensitive (RFC 7235).
    assertAllowed(
      await forwardAuth(service.internalUrl, { authorization: `bearer ${live.token}` }),
      user.userId,
      live.id,
    );
  });

  it("only /auth and /auth/...: /authx, /auth-z and /authorize are not forward-auth (404)", async () => {
    for (const path of ["/authx", "/auth-z", "/authorize", "/x/auth", "/Auth"]) {
      const answer = await forwardAuth(service.internalUrl, {
        path,
        authorization: bearer(live.token),
      });
      assert.equal(answer.status, 404, `${path}: ${answer.body}`);
      assert.equal(answer.headers.get("x-user-id"), null);
    }
  });

  it("the public listener does not serve it (404, even with a live token)", async () => {
    for (const path of ["/auth", "/auth/some/path"]) {
      const answer = await forwardAuth(service.publicUrl, {
        path,
        authorization: bearer(live.token),
      });
      assert.equal(answer.status, 404);
      assert.equal(answer.headers.get("x-user-id"), null);
      assert.equal(answer.headers.get("www-authenticate"), null);
    }
  });

  it("no Authorization header, or not Bearer: 401 with the bare challenge", async () => {
    const cases: (string | undefined)[] = [
      undefined,
      "",
      `Basic ${Buffer.from("user:pass").toString("base64")}`,
      `Token ${live.token}`,
      live.token,
    ];
    for (const authorization of cases) {
      for (const method of ["GET", "POST", "HEAD"]) {
        const answer = await forwardAuth(service.internalUrl, {
          method,
          ...(authorization === undefined ? {} : { authorization }),
        });
        assertRefused(answer, MISSING, method === "HEAD");
      }
    }
  });

  it("a malformed, unknown, expired or deleted token: 401 invalid_token, the same answer for each", async () => {
    const expiring = await createToken(service.publicUrl, user, { expiresIn: 1n });
    const deleted = await createToken(service.publicUrl, user, { name: "deleted" });
    used.push(expiring.token, deleted.token);
    assertAllowed(
      await forwardAuth(service.internalUrl, { authorization: bearer(deleted.token) }),
      user.userId,
      deleted.id,
    );
    await deleteToken(service.publicUrl, user, deleted.id);
    // An expiry of 1 s: the store keeps the exact millisecond; 1.2 s later it has passed.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const last = live.token.at(-1) === "A" ? "B" : "A";
    const bad = {
      malformed: "pt_not-a-token",
      "wrong checksum": live.token.slice(0, -1) + last,
      "another service's kind of token": `ghp_${"a".repeat(36)}`,
      // Well formed, of a real user and a real token id, but another secret.
      "unknown secret": generateToken(user.userId, live.id),
      "unknown user": generateToken(randomUUID(), live.id),
      expired: expiring.token,
      deleted: deleted.token,
    };
    const bodies = new Set<string>();
    // The Bearer scheme with no token, or with something no token looks like, presents an invalid one.
    const headers: Record<string, string> = {
      ...Object.fromEntries(Object.entries(bad).map(([kind, token]) => [kind, bearer(token)])),
      "Bearer alone": "Bearer",
      "Bearer and spaces": "Bearer ",
      "two words": `Bearer ${live.token} extra`,
    };
    for (const [kind, authorization] of Object.entries(headers)) {
      const answer = await forwardAuth(service.internalUrl, { authorization });
      assertRefused(answer, INVALID);
      bodies.add(answer.body);
      const head = await forwardAuth(service.internalUrl, {
        method: "HEAD",
        authorization,
      });
      assertRefused(head, INVALID, true);
      assert.equal(head.headers.get("content-length"), answer.headers.get("content-length"), kind);
    }
    assert.equal(bodies.size, 1, `one answer for every bad token: ${[...bodies].join(" | ")}`);
    // The live token still passes.
    assertAllowed(
      await forwardAuth(service.internalUrl, { authorization: bearer(live.token) }),
      user.userId,
      live.id,
    );
  });

  it("a deleted token is refused here at once, and by a second service process on the same Redis within the cache's bound", async () => {
    const token = await createToken(service.publicUrl, user);
    used.push(token.token);
    for (const url of [service.internalUrl, secondInternalUrl]) {
      assertAllowed(
        await forwardAuth(url, { authorization: bearer(token.token) }),
        user.userId,
        token.id,
      );
    }
    await deleteToken(service.publicUrl, user, token.id);
    const answered = performance.now();
    assertRefused(
      await forwardAuth(service.internalUrl, { authorization: bearer(token.token) }),
      INVALID,
    );
    // The second process learns of the delete from Redis, on a socket of its own.
    await untilElapsed(answered, OWN_BOUND_MS);
    assertRefused(
      await forwardAuth(secondInternalUrl, { authorization: bearer(token.token) }),
      INVALID,
    );
  });

  it("a user registered with an upper-case UUID: X-User-Id is lowercase", async () => {
    const upper = await newUser(randomUUID().toUpperCase());
    assert.notEqual(upper.userId, upper.userId.toLowerCase());
    await register(service, upper);
    const token = await createToken(service.publicUrl, upper);
    used.push(token.token);
    const answer = await forwardAuth(service.internalUrl, { authorization: bearer(token.token) });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("x-user-id"), upper.userId.toLowerCase());
    assert.match(answer.headers.get("x-user-id") ?? "", UUID);
  });

  // Issue 34, item 6. Envoy does not run here (no Debian or npm package of it): this is the
  // request its ext_authz HTTP service makes with the docs' recipe, byte for byte on HTTP/1.1
  // (Envoy's codec writes lowercase names): the client's method, `path_prefix` + the client's
  // path and query, the client's Host, `content-length: 0` (the body is not sent), the client's
  // Authorization if it sent one, and the router's timeout header. Refused 421 before.
  it("answers the Envoy recipe's check as sent: the client's method, Host and path under /auth", async () => {
    const { hostname, port } = new URL(service.internalUrl);
    const envoyCheck = (method: string, path: string, authorization?: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connectTcp(Number(port), hostname, () => {
          socket.write(
            `${method} /auth${path} HTTP/1.1\r\nhost: api.example.com\r\ncontent-length: 0\r\n` +
              (authorization === undefined ? "" : `authorization: ${authorization}\r\n`) +
              "x-envoy-expected-rq-timeout-ms: 2000\r\n\r\n",
          );
        });
        let text = "";
        socket.setEncoding("latin1");
        socket.on("data", (chunk: string) => {
          text += chunk;
          const end = text.indexOf("\r\n\r\n");
          const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
          if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on("error", reject);
        socket.on("close", () => resolve(text));
      });
    const allowed = await envoyCheck("GET", "/api/orders?limit=5", bearer(live.token));
    assert.match(allowed, /^HTTP\/1\.1 200 /, allowed);
    assert.match(allowed, new RegExp(`\r\nx-user-id: ${user.userId}\r\n`, "i"));
    assert.match(allowed, new RegExp(`\r\nx-token-id: ${live.id}\r\n`, "i"));
    const posted = await envoyCheck("POST", "/api/orders", bearer(live.token));
    assert.match(posted, /^HTTP\/1\.1 200 /, posted);
    const anonymous = await envoyCheck("DELETE", "/api/orders/7");
    assert.match(anonymous, /^HTTP\/1\.1 401 /, anonymous);
    assert.match(anonymous, /\r\nwww-authenticate: Bearer realm="perps-tokens"\r\n/i);
    const invalid = await envoyCheck("GET", "/", bearer("pt_forged"));
    assert.match(invalid, /^HTTP\/1\.1 401 /, invalid);
    assert.match(invalid, /error="invalid_token"/);

    // A cluster with http2_protocol_options sends the same as HTTP/2 headers.
    const session = connectH2(service.internalUrl);
    try {
      const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
        const stream = session.request({
          ":method": "PUT",
          ":path": "/auth/api/orders/7?x=1",
          ":authority": "api.example.com",
          "content-length": "0",
          authorization: bearer(live.token),
          "x-envoy-expected-rq-timeout-ms": "2000",
        });
        stream.on("response", resolve);
        stream.on("error", reject);
        stream.resume();
      });
      assert.equal(headers[":status"], 200);
      assert.equal(headers["x-user-id"], user.userId);
    } finally {
      session.close();
    }
  });

  it("answers without reading the body: a request whose body never comes is answered at once (HTTP/1.1 and HTTP/2)", async () => {
    const ids = [`fwd-auth-h1-${process.pid}`, `fwd-auth-h2-${process.pid}`];
    const { hostname, port } = new URL(service.internalUrl);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connectTcp(Number(port), hostname, () => {
        socket.write(
          `POST /auth HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${live.token}\r\n` +
            `X-Request-Id: ${ids[0]}\r\n` +
            "Content-Length: 1000000\r\n\r\nonly the start of the body",
        );
      });
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("\r\n\r\n")) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text));
    });
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, new RegExp(`\r\nx-user-id: ${user.userId}\r\n`, "i"));

    const session = connectH2(service.internalUrl);
    try {
      const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
        const stream = session.request(
          {
            ":method": "POST",
            ":path": "/auth/h2",
            authorization: bearer(live.token),
            "x-request-id": ids[1],
          },
          { endStream: false },
        );
        stream.write("a body that does not end");
        stream.on("response", resolve);
        stream.on("error", reject);
      });
      assert.equal(headers[":status"], 200);
      assert.equal(headers["x-user-id"], user.userId);
      assert.equal(headers["x-token-id"], live.id);
    } finally {
      session.destroy();
    }
    // Checks are counted, not logged one by one (docs/design-choices.md).
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const id of ids) {
      assert.deepEqual(requestLines(service, id), [], "a check writes no line of its own");
    }
  });

  it("every answer echoes the caller's request id and is counted once (perps_token_requests_total), with no line of its own", async () => {
    const metricsText = async () => {
      const res = await fetch(`${service.internalUrl}/metrics`);
      return samples(await res.text());
    };
    const cases = [
      { authorization: bearer(live.token), status: 200, code: "ok", logCode: "ok" },
      {
        authorization: undefined,
        status: 401,
        code: "unauthenticated",
        logCode: "Unauthenticated",
      },
      {
        authorization: bearer("pt_bad"),
        status: 401,
        code: "unauthenticated",
        logCode: "Unauthenticated",
      },
    ];
    let n = 0;
    for (const c of cases) {
      const before = await metricsText();
      const requestId = `fwd-auth-${process.pid}-${n++}`;
      const res = await fetch(`${service.internalUrl}/auth/check`, {
        headers: {
          "x-request-id": requestId,
          ...(c.authorization === undefined ? {} : { authorization: c.authorization }),
        },
      });
      await res.arrayBuffer();
      assert.equal(res.status, c.status);
      assert.equal(res.headers.get("x-request-id"), requestId);
      const series = `perps_token_requests_total{method="forward-auth",protocol="http",code="${c.code}"}`;
      let now = await metricsText();
      for (let i = 0; i < 50 && (now.get(series) ?? 0) < (before.get(series) ?? 0) + 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        now = await metricsText();
      }
      assert.equal(now.get(series), (before.get(series) ?? 0) + 1, `${series} counted once`);
      // A check's answer, live or not: counted in the worker's summary line, not logged one by one.
      assert.deepEqual(requestLines(service, requestId), [], c.logCode);
    }
    // Counted once: no second series counts forward-auth answers.
    const all = await metricsText();
    assert.equal(
      [...all.keys()].filter((name) => name.includes("forward_auth")).length,
      0,
      "no other forward-auth series",
    );
  });
});

describe("forward-auth while Redis is down", () => {
  const { redis, service } = serviceSuite();

  it("answers 503 (never a hang), logs it as a failure and counts it; 200 again once Redis is back", async () => {
    const user = await newUser();
    await register(service, user);
    const token = await createToken(service.publicUrl, user);
    await redis.stop();
    const requestId = `fwd-auth-down-${process.pid}`;
    const res = await fetch(`${service.internalUrl}/auth`, {
      headers: { authorization: bearer(token.token), "x-request-id": requestId },
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json()) as { code: number; message: string; details: unknown[] };
    assert.equal(res.status, 503);
    assert.equal(body.code, 14);
    assert.deepEqual(body.details, []);
    assert.equal(res.headers.get("x-user-id"), null);
    assert.equal(res.headers.get("www-authenticate"), null);
    const metrics = samples(await (await fetch(`${service.internalUrl}/metrics`)).text());
    assert.equal(
      metrics.get(
        'perps_token_requests_total{method="forward-auth",protocol="http",code="unavailable"}',
      ),
      1,
    );
    const lines = requestLines(service, requestId);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]?.code, "Unavailable");
    assert.equal(lines[0]?.level, 50, "Redis down is our failure: an error line");
    // Missing credentials need no Redis: still 401.
    assertRefused(await forwardAuth(service.internalUrl), MISSING);

    await redis.restart();
    let answer = await forwardAuth(service.internalUrl, { authorization: bearer(token.token) });
    for (let i = 0; i < 100 && answer.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await forwardAuth(service.internalUrl, { authorization: bearer(token.token) });
    }
    assertAllowed(answer, user.userId, token.id);
  });
});
