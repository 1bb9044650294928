import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { connect } from "node:http2";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { newUser } from "../support/signing.js";
import { CHROMIUM } from "../support/test-browser.js";
import { operatorHeaders, TEST_OPERATOR } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 29, attack 1: a page on evil.example whose name was then pointed at
// 127.0.0.1 called PutUserKey, ListUserKeys and RevokeUserTokens on the
// internal listener and read their answers. The internal listener now serves
// only its own names (loopback, its address, INTERNAL_HOSTNAMES) and refuses
// every admin call that carries Origin.

const PUT = "/perps.token.v1.UserKeyService/PutUserKey";
const LIST = "/perps.token.v1.UserKeyService/ListUserKeys";
const REVOKE = "/perps.token.v1.TokenAdminService/RevokeUserTokens";

interface Answer {
  status: number;
  body: string;
}

/** A Connect JSON call over HTTP/1.1 with the Host (and other headers) given. */
function callWithHost(
  url: string,
  host: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        path,
        method: "POST",
        headers: { host, "content-type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** The status of one HTTP/2 request with the `:authority` given. */
async function statusWithAuthority(
  url: string,
  authority: string,
  path: string,
  headers: Record<string, string>,
): Promise<number> {
  const session = connect(url);
  try {
    return await new Promise<number>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        ":authority": authority,
        ...headers,
      });
      stream.on("response", (answer) => resolve(Number(answer[":status"])));
      stream.on("error", reject);
      stream.resume();
      stream.end(headers["content-type"] === "application/grpc" ? new Uint8Array(5) : "{}");
    });
  } finally {
    session.close();
  }
}

describe("DNS rebinding and web pages on the internal listener", () => {
  let redis: TestRedis;
  let service: TestService;
  let port: string;

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      internalHostnames: ["tokens.internal"],
    });
    port = new URL(service.internalUrl).port;
  });
  after(async () => {
    await service?.stop();
    await redis?.dispose();
  });

  it("a Host that is not its own is 421 PERMISSION_DENIED, even with an operator's secret", async () => {
    const user = await newUser();
    for (const host of [
      `evil.example:${port}`,
      "evil.example",
      `tokens.internal.evil.example:${port}`,
    ]) {
      const answer = await callWithHost(service.internalUrl, host, PUT, operatorHeaders(), {
        userId: user.userId,
        publicKey: user.publicKey,
      });
      assert.equal(answer.status, 421, `${host}: ${answer.body}`);
      const body = JSON.parse(answer.body) as { code: number; message: string };
      assert.equal(body.code, 7);
      assert.match(body.message, /INTERNAL_HOSTNAMES/);
    }
    // Its own names pass (the call then needs nothing more than the operator's secret).
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      "LOCALHOST.",
      `[::1]:${port}`,
      `tokens.internal:${port}`,
      "Tokens.Internal",
    ]) {
      const answer = await callWithHost(service.internalUrl, host, LIST, operatorHeaders(), {
        userId: user.userId,
      });
      assert.equal(answer.status, 200, `${host}: ${answer.body}`);
    }
    const listed = await callWithHost(service.internalUrl, "127.0.0.1", LIST, operatorHeaders(), {
      userId: user.userId,
    });
    assert.equal(listed.body, "{}", "nothing was registered");
  });

  it("gRPC with another :authority is refused too; /auth answers whatever the name (proxies forward theirs)", async () => {
    const session = connect(service.internalUrl);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": LIST,
          ":authority": `evil.example:${port}`,
          "content-type": "application/grpc",
          ...operatorHeaders(),
        });
        stream.on("response", (headers) => resolve(Number(headers[":status"])));
        stream.on("error", reject);
        stream.resume();
        stream.end(new Uint8Array(5));
      });
      assert.equal(status, 421);
    } finally {
      session.close();
    }
    const auth = await new Promise<number>((resolve, reject) => {
      const { hostname } = new URL(service.internalUrl);
      httpRequest(
        { hostname, port, path: "/auth", headers: { host: "api.example.com" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on("error", reject)
        .end();
    });
    assert.equal(auth, 401, "forward-auth's own answer to a request without a token");
  });

  // Issue 34, item 6: the Envoy recipe asks `/auth` + the original path with the client's Host.
  it("every path under /auth answers whatever the name, over HTTP/1.1 and HTTP/2", async () => {
    for (const path of ["/auth/", "/auth/api/orders", "/auth/api/orders?x=1"]) {
      const answer = await callWithHost(service.internalUrl, "api.example.com", path, {}, {});
      assert.equal(answer.status, 401, `${path}: ${answer.body}`);
      assert.match(answer.body, /"code":16/, "forward-auth's own refusal: no bearer token");
      const h2 = await statusWithAuthority(service.internalUrl, "api.example.com", path, {});
      assert.equal(h2, 401, path);
    }
    // Not a path under /auth: refused as before.
    for (const path of ["/authx", "/auth-z/x"]) {
      const answer = await callWithHost(service.internalUrl, "api.example.com", path, {}, {});
      assert.equal(answer.status, 421, `${path}: ${answer.body}`);
    }
  });

  // Issue 34, item 10: these were read as 127.0.0.1 or ::1 and served.
  it("a malformed Host or :authority is 421 on both listeners, /auth included", async () => {
    const user = await newUser();
    const malformed = [
      "[::1]evil.example",
      `[::1]evil.example:${port}`,
      "[::1",
      "127.0.0.1:evil.example",
      `127.0.0.1:${port}:evil.example`,
      "::1",
      `user@127.0.0.1:${port}`,
    ];
    const publicPort = new URL(service.publicUrl).port;
    for (const host of malformed) {
      const admin = await callWithHost(service.internalUrl, host, LIST, operatorHeaders(), {
        userId: user.userId,
      });
      assert.equal(admin.status, 421, `${host}: ${admin.body}`);
      assert.match(admin.body, /is not host\[:port\]/);
      const auth = await callWithHost(service.internalUrl, host, "/auth/api", {}, {});
      assert.equal(auth.status, 421, `${host} on /auth: ${auth.body}`);
      const rest = await callWithHost(service.publicUrl, host, "/user/tokens", {}, {});
      assert.equal(rest.status, 421, `${host} on the public listener: ${rest.body}`);
      const grpcCall = await statusWithAuthority(service.internalUrl, host, LIST, {
        "content-type": "application/grpc",
        ...operatorHeaders(),
      }).catch((err: NodeJS.ErrnoException) => {
        // Node 24's nghttp2 resets some of these (e.g. "[::1", "user@…") as a
        // malformed :authority before any handler sees them: refused all the same.
        assert.equal(err.code, "ERR_HTTP2_STREAM_ERROR", String(err));
        assert.match(err.message, /NGHTTP2_PROTOCOL_ERROR/);
        return 421;
      });
      assert.equal(grpcCall, 421, `${host} as gRPC :authority`);
    }
    assert.equal(
      (await callWithHost(service.publicUrl, `127.0.0.1:${publicPort}`, "/user/tokens", {}, {}))
        .status,
      400,
      "a well-formed Host reaches the API",
    );
  });

  it("an admin call carrying Origin is PERMISSION_DENIED, whatever the Host and the secret", async () => {
    const user = await newUser();
    const answer = await callWithHost(
      service.internalUrl,
      `127.0.0.1:${port}`,
      PUT,
      { ...operatorHeaders(), origin: `http://127.0.0.1:${port}` },
      { userId: user.userId, publicKey: user.publicKey },
    );
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /"code":"permission_denied"/);
    assert.match(answer.body, /carries Origin/);
    // IntrospectToken is no admin call: a page may not need it, but Origin alone does not refuse it.
    const introspect = await callWithHost(
      service.internalUrl,
      `127.0.0.1:${port}`,
      "/perps.token.v1.TokenIntrospectionService/IntrospectToken",
      { origin: "http://127.0.0.1" },
      { token: "pt_x" },
    );
    assert.equal(introspect.status, 200);
  });

  describe("a rebinding page in chromium", () => {
    let browser: Browser;
    before(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // evil.example now resolves to this machine: the rebinding, done.
        // The page stands for one served from the attacker's public address: the
        // browser's own private-network checks, which an attacker can meet or a
        // browser may lack, are off, so that the service's checks are what is tested.
        args: [
          "--no-sandbox",
          "--host-resolver-rules=MAP evil.example 127.0.0.1",
          "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks",
        ],
      });
    });
    after(async () => {
      await browser?.close();
    });

    it("cannot register a key, list keys or revoke tokens, even knowing an operator's secret", async () => {
      const user = await newUser();
      const page = await browser.newPage();
      const origin = `http://evil.example:${port}`;
      try {
        // The attacker's page, as evil.example served it before the name moved.
        await page.route(`${origin}/`, (route) =>
          route.fulfill({ status: 200, contentType: "text/html", body: "<p>cats</p>" }),
        );
        await page.goto(`${origin}/`);
        const results = await page.evaluate(
          async ({ calls, secret }) =>
            Promise.all(
              calls.map(async ([path, body]) => {
                const res = await fetch(path, {
                  method: "POST",
                  headers: {
                    "content-type": "application/json",
                    authorization: `Bearer ${secret}`,
                  },
                  body: JSON.stringify(body),
                });
                return { status: res.status, body: await res.text() };
              }),
            ),
          {
            calls: [
              [PUT, { userId: user.userId, publicKey: user.publicKey }],
              [LIST, { userId: user.userId }],
              [REVOKE, { userId: user.userId }],
            ] as [string, unknown][],
            secret: TEST_OPERATOR.secret,
          },
        );
        // Same origin after the rebinding, so the page reads the answers: each a refusal.
        for (const result of results) {
          assert.equal(result.status, 421, result.body);
          assert.match(result.body, /"code":7/);
        }
      } finally {
        await page.close();
      }
      const listed = await callWithHost(service.internalUrl, "127.0.0.1", LIST, operatorHeaders(), {
        userId: user.userId,
      });
      assert.equal(listed.body, "{}", "no key was registered");
      const refused = service.logs.filter(
        (line) => line.includes('"code":"PermissionDenied"') && line.includes('"method":"http"'),
      );
      assert.ok(refused.length >= 3, "each refusal logged");
    });
  });
});
