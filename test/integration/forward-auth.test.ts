import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from "node:http";
import { connect as connectH2 } from "node:http2";
import { connect as connectTcp } from "node:net";
import { after, before, describe, it } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { generateToken } from "@perps/token-client/protocol";
import type { RedisTopology } from "../../src/redis/redis-topology.js";
import { killMainProcesses, type MainProcess, startMainProcess } from "../support/main-process.js";
import { markdownBlocks } from "../support/markdown-blocks.js";
import { samples } from "../support/prometheus-samples.js";
import { newUser, signedCreate, signedDelete, type TestUser } from "../support/signing.js";
import { startTestCaddy } from "../support/test-caddy.js";
import { startTestNginx } from "../support/test-nginx.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Forward-auth on the internal listener (`/auth`, `/auth/...`), for nginx
// auth_request, Traefik ForwardAuth and Envoy ext_authz: a live bearer token
// answers 200 with X-User-Id and X-Token-Id, anything else 401 with its
// WWW-Authenticate challenge, a Redis that cannot answer 503.

const MISSING = 'Bearer realm="perps-tokens"';
const INVALID = 'Bearer realm="perps-tokens", error="invalid_token"';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Fields = Record<string, string | bigint | undefined>;
const json = (fields: Fields) =>
  JSON.stringify(fields, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v));

interface Created {
  id: string;
  token: string;
}

async function register(service: { internalAddress: string }, user: TestUser): Promise<void> {
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  try {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
  } finally {
    keys.close();
  }
}

let nextTimestamp = Date.now();

async function createToken(
  publicUrl: string,
  user: TestUser,
  fields: { name?: string; expiresIn?: bigint } = {},
): Promise<Created> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: json(await signedCreate(user, { ...fields, timestamp: BigInt(nextTimestamp++) })),
  });
  const body = (await res.json()) as Partial<Created>;
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.ok(body.id !== undefined && body.token !== undefined);
  return { id: body.id, token: body.token };
}

async function deleteToken(publicUrl: string, user: TestUser, tokenId: string): Promise<void> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "DELETE",
    headers: { "content-type": "application/json" },
    body: json(await signedDelete(user, tokenId, { timestamp: BigInt(nextTimestamp++) })),
  });
  assert.equal(res.status, 200, await res.text());
}

interface AuthAnswer {
  status: number;
  headers: Headers;
  body: string;
}

async function forwardAuth(
  baseUrl: string,
  init: { path?: string; method?: string; authorization?: string; body?: string } = {},
): Promise<AuthAnswer> {
  const res = await fetch(`${baseUrl}${init.path ?? "/auth"}`, {
    method: init.method ?? "GET",
    headers: init.authorization === undefined ? {} : { authorization: init.authorization },
    ...(init.body === undefined ? {} : { body: init.body }),
    // A hang is a failure, not a stuck suite.
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

const bearer = (token: string) => `Bearer ${token}`;

function assertAllowed(answer: AuthAnswer, userId: string, tokenId: string): void {
  assert.equal(answer.status, 200, answer.body);
  assert.equal(answer.headers.get("x-user-id"), userId.toLowerCase());
  assert.equal(answer.headers.get("x-token-id"), tokenId);
  assert.equal(answer.headers.get("cache-control"), "no-store");
  assert.equal(answer.body, "");
}

function assertRefused(answer: AuthAnswer, challenge: string, head = false): void {
  assert.equal(answer.status, 401, answer.body);
  assert.equal(answer.headers.get("www-authenticate"), challenge);
  assert.equal(answer.headers.get("x-user-id"), null);
  assert.equal(answer.headers.get("x-token-id"), null);
  if (head) {
    assert.equal(answer.body, "");
    return;
  }
  assert.equal(answer.headers.get("content-type"), "application/json");
  const body = JSON.parse(answer.body) as { code: number; message: string; details: unknown[] };
  assert.equal(body.code, 16);
  assert.equal(typeof body.message, "string");
  assert.notEqual(body.message, "");
  assert.deepEqual(body.details, []);
}

/** The service's log lines (parsed) of this request id. */
function linesOf(service: TestService, requestId: string): Record<string, unknown>[] {
  return service.logs
    .join("")
    .split("\n")
    .filter((line) => line.includes(requestId))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.requestId === requestId);
}

/** The environment that points `npm start`'s command at this Redis. */
function redisEnv(topology: RedisTopology): Record<string, string> {
  switch (topology.kind) {
    case "url":
      return { REDIS_URL: topology.url };
    case "cluster":
      return { REDIS_CLUSTER_NODES: topology.nodes.map((n) => `${n.host}:${n.port}`).join(",") };
    default:
      throw new Error(`no environment for a ${topology.kind} Redis here`);
  }
}

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

  it("a deleted token is refused at once, here and by a second service process on the same Redis", async () => {
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
    for (const url of [secondInternalUrl, service.internalUrl]) {
      assertRefused(await forwardAuth(url, { authorization: bearer(token.token) }), INVALID);
    }
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
    // Each is logged once, as answered, when its connection closes.
    for (const id of ids) {
      let lines = linesOf(service, id);
      for (let i = 0; i < 100 && lines.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lines = linesOf(service, id);
      }
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]?.code, "ok");
    }
  });

  it("every answer has its request id, one log line and one count (one metric: perps_token_requests_total)", async () => {
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
      const lines = linesOf(service, requestId);
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]?.method, "forward-auth");
      assert.equal(lines[0]?.protocol, "http");
      assert.equal(lines[0]?.code, c.logCode);
      assert.equal(lines[0]?.level, 30, "info: a refused token is the caller's problem");
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
  let redis: TestRedis;
  let service: TestService;

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({ redis: redis.topology });
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
  });

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
    const lines = linesOf(service, requestId);
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

/** The docs' one block of `lang` in `file` (readme-examples.test.ts checks there is one). */
function documentedBlock(file: string, lang: string): string {
  const blocks = markdownBlocks(file).filter((block) => block.lang === lang);
  assert.equal(blocks.length, 1, `${file} has one ${lang} block`);
  return blocks[0]?.text ?? "";
}

/** An edge proxy running a documented recipe, in front of `api` and asking `auth`. */
interface EdgeProxy {
  /** How the proxy answers a 503 of /auth. */
  readonly unavailableStatus: number;
  start(addresses: { auth: string; api: string }): Promise<{ url: string; stop(): Promise<void> }>;
}

/** The documented addresses (internal listener 127.0.0.1:9090, API 127.0.0.1:3000), changed to the test's. */
function withAddresses(recipe: string, addresses: { auth: string; api: string }): string {
  assert.ok(recipe.includes("127.0.0.1:9090"), "the recipe names the internal listener");
  assert.ok(recipe.includes("127.0.0.1:3000"), "the recipe names the API");
  return recipe
    .replaceAll("127.0.0.1:9090", addresses.auth)
    .replaceAll("127.0.0.1:3000", addresses.api);
}

const PROXIES: Record<string, EdgeProxy> = {
  "the README's nginx auth_request snippet, in a real nginx": {
    unavailableStatus: 500,
    start: (addresses) =>
      startTestNginx(withAddresses(documentedBlock("README.md", "nginx"), addresses)),
  },
  // Where an operator passes underscores on (nginx drops those names by default), the
  // snippet's own clearing is what keeps X_User_Id out.
  "the README's nginx snippet with underscores_in_headers on": {
    unavailableStatus: 500,
    start: (addresses) =>
      startTestNginx(
        `underscores_in_headers on;\n${withAddresses(documentedBlock("README.md", "nginx"), addresses)}`,
      ),
  },
  "docs/api.md's Caddyfile (forward_auth), in a real caddy": {
    unavailableStatus: 503,
    start: (addresses) =>
      startTestCaddy(
        withAddresses(documentedBlock("docs/api.md", "caddyfile"), addresses),
        "api.example.com",
      ),
  },
};

/** The names an upstream may read as X-User-Id or X-Token-Id: any case, `-` or `_`. */
const identityName = (name: string) => name.toLowerCase().replaceAll("_", "-");

/** Every spelling of a header a client may send to pass as the proxy's. */
function spellings(name: "X-User-Id" | "X-Token-Id", value: string): Record<string, string> {
  const [a, b, c] = name.split("-");
  return {
    [`${a}-${b}-${c}`]: value,
    [`${a}_${b}_${c}`]: value,
    [`${a}-${b}_${c}`]: value,
    [`${a}_${b}-${c}`]: value,
  };
}

for (const [title, proxy] of Object.entries(PROXIES)) {
  describe(title, () => {
    let redis: TestRedis;
    let service: TestService;
    let edge: { url: string; stop(): Promise<void> };
    let upstream: Server;
    let user: TestUser;
    let other: TestUser;
    let live: Created;
    let othersToken: Created;
    /** What the API behind the proxy received, with every header that could pass as an identity. */
    const seen: {
      url: string;
      headers: IncomingHttpHeaders;
      identity: [string, string][];
      body: string;
    }[] = [];

    before(async () => {
      redis = await startTestRedis();
      service = await startTestService({ redis: redis.topology });
      // The API behind the proxy: echoes what it was given.
      upstream = createServer((req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (chunk: string) => {
          body += chunk;
        });
        req.on("end", () => {
          const identity: [string, string][] = [];
          for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
            const [name = "", value = ""] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
            if (["x-user-id", "x-token-id"].includes(identityName(name))) {
              identity.push([name, value]);
            }
          }
          seen.push({ url: req.url ?? "", headers: req.headers, identity, body });
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              userId: req.headers["x-user-id"] ?? null,
              tokenId: req.headers["x-token-id"] ?? null,
              body,
            }),
          );
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
      const address = upstream.address();
      assert.ok(address !== null && typeof address === "object");
      edge = await proxy.start({
        auth: service.internalAddress,
        api: `127.0.0.1:${address.port}`,
      });
      user = await newUser();
      other = await newUser();
      await register(service, user);
      await register(service, other);
      live = await createToken(service.publicUrl, user, { name: "edge" });
      othersToken = await createToken(service.publicUrl, other, { name: "edge" });
    });
    after(async () => {
      await edge?.stop();
      await new Promise<void>((resolve) => upstream?.close(() => resolve()));
      await service?.stop();
      await redis?.dispose();
    });

    async function viaProxy(
      path: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    ) {
      const res = await fetch(`${edge.url}${path}`, {
        method: init.method ?? "GET",
        headers: init.headers ?? {},
        ...(init.body === undefined ? {} : { body: init.body }),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    }

    /** A GET through the proxy over node:http, which (unlike fetch) sends any Connection header. */
    function viaRawProxy(path: string, headers: Record<string, string>) {
      const { hostname, port } = new URL(edge.url);
      return new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest({ hostname, port, path, headers, agent: false }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")));
        req.on("error", reject);
        req.end();
      });
    }

    it("a live token: the API gets the request with the user's id and the token's id", async () => {
      const answer = await viaProxy("/api/orders?x=1", {
        headers: { authorization: bearer(live.token) },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(JSON.parse(answer.text), {
        userId: user.userId,
        tokenId: live.id,
        body: "",
      });
      assert.equal(seen.at(-1)?.url, "/api/orders?x=1");
    });

    it("the API gets the request's body (only the auth subrequest goes without it)", async () => {
      const answer = await viaProxy("/api/orders", {
        method: "POST",
        headers: { authorization: bearer(live.token), "content-type": "application/json" },
        body: '{"qty":1}',
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(JSON.parse(answer.text), {
        userId: user.userId,
        tokenId: live.id,
        body: '{"qty":1}',
      });
    });

    it("identity headers sent by the client, in any spelling, never reach the API: it sees only the service's answer", async () => {
      const forged = (userId: string, tokenId: string, lower: boolean) => {
        const all = { ...spellings("X-User-Id", userId), ...spellings("X-Token-Id", tokenId) };
        return Object.fromEntries(
          Object.entries(all).map(([name, value]) => [lower ? name.toLowerCase() : name, value]),
        );
      };
      // A token of one user, with another user's id (and token id), in every spelling and case.
      for (const [token, owner, claimed] of [
        [live, user, other.userId],
        [othersToken, other, user.userId],
        [live, user, randomUUID()],
      ] as const) {
        for (const lower of [false, true]) {
          const answer = await viaProxy("/api/spoof", {
            headers: { authorization: bearer(token.token), ...forged(claimed, "forged", lower) },
          });
          assert.equal(answer.status, 200, answer.text);
          const request = seen.at(-1);
          assert.equal(request?.url, "/api/spoof");
          // Exactly one of each, set by the proxy from the service's answer.
          assert.deepEqual(
            request?.identity
              .map(([name, value]) => [identityName(name), value])
              .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
            [
              ["x-token-id", token.id],
              ["x-user-id", owner.userId],
            ],
            JSON.stringify(request?.identity),
          );
        }
      }
    });

    it("a client's Connection header naming the identity headers does not strip the service's answer", async () => {
      for (const connection of [
        "X-User-Id, X-Token-Id",
        "x-user-id,x-token-id",
        "keep-alive, X-User-Id, X-Token-Id",
      ]) {
        for (const forge of [false, true]) {
          const answer = await viaRawProxy("/api/hop", {
            authorization: bearer(live.token),
            connection,
            ...(forge
              ? { ...spellings("X-User-Id", other.userId), ...spellings("X-Token-Id", "forged") }
              : {}),
          });
          assert.equal(answer.status, 200, answer.text);
          const request = seen.at(-1);
          assert.equal(request?.url, "/api/hop");
          assert.deepEqual(
            request?.identity
              .map(([name, value]) => [identityName(name), value])
              .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
            [
              ["x-token-id", live.id],
              ["x-user-id", user.userId],
            ],
            `Connection: ${connection}: ${JSON.stringify(request?.identity)}`,
          );
        }
      }
    });

    it("no token or a bad one, whatever identity the client claims: 401 with the service's WWW-Authenticate, and the API sees nothing", async () => {
      const count = seen.length;
      const claims = {
        ...spellings("X-User-Id", user.userId),
        ...spellings("X-Token-Id", live.id),
      };
      const none = await viaProxy("/api", { headers: claims });
      assert.equal(none.status, 401);
      assert.equal(none.headers.get("www-authenticate"), MISSING);
      const bad = await viaProxy("/api", {
        headers: { ...claims, authorization: bearer(generateToken(user.userId, live.id)) },
      });
      assert.equal(bad.status, 401);
      assert.equal(bad.headers.get("www-authenticate"), INVALID);
      assert.equal(seen.length, count, "the API was not called");
    });

    it("a deleted token is refused at the edge at once", async () => {
      const token = await createToken(service.publicUrl, user);
      assert.equal(
        (await viaProxy("/api", { headers: { authorization: bearer(token.token) } })).status,
        200,
      );
      await deleteToken(service.publicUrl, user, token.id);
      const answer = await viaProxy("/api", { headers: { authorization: bearer(token.token) } });
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get("www-authenticate"), INVALID);
    });

    it(`Redis down: the proxy answers ${proxy.unavailableStatus} (the service's 503) and never lets the request through`, async () => {
      const count = seen.length;
      await redis.stop();
      const answer = await viaProxy("/api", { headers: { authorization: bearer(live.token) } });
      assert.equal(answer.status, proxy.unavailableStatus);
      assert.equal(seen.length, count, "the API was not called");
    });
  });
}
