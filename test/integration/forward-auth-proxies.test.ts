import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from "node:http";
import { after, before, describe, it } from "node:test";
import { generateToken } from "@perps/token-client/protocol";
import {
  bearer,
  type Created,
  createToken,
  deleteToken,
  INVALID,
  MISSING,
  register,
} from "../support/forward-auth-calls.js";
import { markdownBlocks } from "../support/markdown-blocks.js";
import { newUser, type TestUser } from "../support/signing.js";
import { startTestCaddy } from "../support/test-caddy.js";
import { startTestNginx } from "../support/test-nginx.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Forward-auth behind the edge proxies docs/api.md documents (nginx, Caddy).

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
  /** Whether a 403 of /auth reaches the client with its WWW-Authenticate (nginx answers its own 403). */
  readonly passesScopeChallenge: boolean;
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
  "docs/api.md's nginx auth_request snippet, in a real nginx": {
    unavailableStatus: 500,
    passesScopeChallenge: false,
    start: (addresses) =>
      startTestNginx(withAddresses(documentedBlock("docs/api.md", "nginx"), addresses)),
  },
  // Where an operator passes underscores on (nginx drops those names by default), the
  // snippet's own clearing is what keeps X_User_Id out.
  "docs/api.md's nginx snippet with underscores_in_headers on": {
    unavailableStatus: 500,
    passesScopeChallenge: false,
    start: (addresses) =>
      startTestNginx(
        `underscores_in_headers on;\n${withAddresses(documentedBlock("docs/api.md", "nginx"), addresses)}`,
      ),
  },
  "docs/api.md's Caddyfile (forward_auth), in a real caddy": {
    unavailableStatus: 503,
    passesScopeChallenge: true,
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

/** The API's echo of an answer that reached it: who the proxy said called, and the body. */
function assertReachedApi(
  answer: { status: number; text: string },
  userId: string,
  tokenId: string,
  body = "",
): void {
  assert.equal(answer.status, 200, answer.text);
  assert.deepEqual(JSON.parse(answer.text), { userId, tokenId, body });
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
      assertReachedApi(answer, user.userId, live.id);
      assert.equal(seen.at(-1)?.url, "/api/orders?x=1");
    });

    it("the API gets the request's body (only the auth subrequest goes without it)", async () => {
      const answer = await viaProxy("/api/orders", {
        method: "POST",
        headers: { authorization: bearer(live.token), "content-type": "application/json" },
        body: '{"qty":1}',
      });
      assertReachedApi(answer, user.userId, live.id, '{"qty":1}');
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

    it("a token bound to addresses: checked against the address the proxy accepted, never one the client names", async () => {
      const here = await createToken(service.publicUrl, user, {
        name: "here",
        allowedIps: ["127.0.0.1"],
      });
      const elsewhere = await createToken(service.publicUrl, user, {
        name: "elsewhere",
        allowedIps: ["203.0.113.7"],
      });
      const forged = { "x-real-ip": "203.0.113.7", "x-forwarded-for": "203.0.113.7" };
      const allowed = await viaProxy("/api/orders", {
        headers: { authorization: bearer(here.token), ...forged },
      });
      assertReachedApi(allowed, user.userId, here.id);
      const before = seen.length;
      const refused = await viaProxy("/api/orders", {
        headers: { authorization: bearer(elsewhere.token), ...forged },
      });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(seen.length, before, "the API saw nothing");
    });

    it("a route that needs a scope: a token without it is refused 403 there and works elsewhere", async () => {
      const trading = await createToken(service.publicUrl, user, { name: "trading" });
      const paying = await createToken(service.publicUrl, user, {
        name: "paying",
        scopes: ["read", "withdraw"],
        allowedIps: ["127.0.0.1", "::1"],
      });
      const before = seen.length;
      for (const path of ["/api/withdrawals", "/api/withdrawals/42"]) {
        const refused = await viaProxy(path, {
          method: "POST",
          headers: { authorization: bearer(trading.token) },
          body: "{}",
        });
        assert.equal(refused.status, 403, `${path}: ${refused.text}`);
        if (proxy.passesScopeChallenge) {
          assert.equal(
            refused.headers.get("www-authenticate"),
            'Bearer realm="perps-tokens", error="insufficient_scope", scope="withdraw"',
          );
        }
      }
      assert.equal(seen.length, before, "the API saw nothing");
      const paid = await viaProxy("/api/withdrawals", {
        method: "POST",
        headers: { authorization: bearer(paying.token) },
        body: "{}",
      });
      assertReachedApi(paid, user.userId, paying.id, "{}");
      // The scope is the route's only: the same token trades on every other one.
      const traded = await viaProxy("/api/orders", {
        headers: { authorization: bearer(trading.token) },
      });
      assert.equal(traded.status, 200, traded.text);
      assert.equal(JSON.parse(traded.text).tokenId, trading.id);
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
      // Never checked before Redis went away: no worker holds it (TOKEN_CACHE_GRACE_MS serves
      // only those, token-cache-grace.test.ts).
      const unseen = await createToken(service.publicUrl, user, { name: "unseen" });
      const count = seen.length;
      await redis.stop();
      const answer = await viaProxy("/api", { headers: { authorization: bearer(unseen.token) } });
      assert.equal(answer.status, proxy.unavailableStatus);
      assert.equal(seen.length, count, "the API was not called");
    });
  });
}
