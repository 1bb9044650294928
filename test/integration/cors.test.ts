import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { type Browser, chromium, type Page } from "playwright-core";
import { createGrpcClient } from "../support/grpc-client.js";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { samples } from "../support/prometheus-samples.js";
import { newUser, signedCreate, type TestUser } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 22 item 7: CORS for browser apps on other origins (CORS_ORIGINS),
// checked with raw preflights and with a real browser (Debian's chromium,
// driven by playwright-core) calling the REST API from a page of a second
// local origin, listed or not.

const PATH = "/user/tokens";
const CHROMIUM = "/usr/bin/chromium";

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function preflight(base: string, origin: string, method = "POST", path = PATH): Promise<Answer> {
  return send(`${base}${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "content-type",
    },
  });
}

/** A plain HTTP server for one origin, serving one empty page. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>an app</title><p>app</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}` };
}

/** What a page's fetch came to: an answer it may read, or the error it threw. */
type PageFetch =
  | { ok: true; status: number; text: string; requestId: string | null; challenge: string | null }
  | { ok: false; error: string; name: string };

function fetchFromPage(
  page: Page,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<PageFetch> {
  return page.evaluate(
    async ({ url, init }): Promise<PageFetch> => {
      try {
        const res = await fetch(url, init);
        return {
          ok: true,
          status: res.status,
          text: await res.text(),
          requestId: res.headers.get("x-request-id"),
          challenge: res.headers.get("www-authenticate"),
        };
      } catch (err) {
        const error = err as Error;
        return { ok: false, error: String(error), name: error.name };
      }
    },
    { url, init },
  );
}

describe("CORS", () => {
  let redis: TestRedis;
  let service: TestService;
  let plain: TestService;
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  let keys: ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>;
  let tokens: ReturnType<typeof createGrpcClient<typeof TokenService.method>>;

  before(async () => {
    redis = await startTestRedis();
    listed = await pageServer();
    unlisted = await pageServer();
    service = await startTestService({
      redis: redis.topology,
      corsOrigins: ["https://app.example.com", listed.origin],
    });
    plain = await startTestService({ redis: redis.topology });
    keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    tokens = createGrpcClient(TokenService, service.internalAddress);
  });

  after(async () => {
    keys.close();
    tokens.close();
    await plain.stop();
    await service.stop();
    await redis.dispose();
    listed.server.close();
    unlisted.server.close();
  });

  async function registeredUser(): Promise<TestUser> {
    const user = await newUser();
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  /** A signed create's JSON body, as a browser app would send it. */
  async function createBody(user: TestUser, name: string): Promise<string> {
    const fields = await signedCreate(user, { name, expiresIn: 3600n });
    return JSON.stringify({
      signature: fields.signature,
      timestamp: Number(fields.timestamp),
      userId: fields.userId,
      expiresIn: 3600,
      name,
    });
  }

  it("a bad CORS_ORIGINS stops the start with exit code 2, naming the variable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "perps-cors-"));
    try {
      const run = startMainProcess({ CORS_ORIGINS: "https://app.example.com/" }, dir);
      assert.equal(await run.exitedWithin(), 2);
      assert.match(run.output(), /^Configuration error: CORS_ORIGINS must be /m);
    } finally {
      killMainProcesses();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("preflights", () => {
    it("a listed origin: 204 with its origin, the path's methods, the headers, a max age", async () => {
      for (const method of ["POST", "DELETE", "GET"]) {
        const res = await preflight(service.publicUrl, "https://app.example.com", method);
        assert.equal(res.status, 204, res.text);
        assert.equal(res.text, "");
        assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example.com");
        assert.equal(res.headers.get("access-control-allow-methods"), "DELETE, GET, POST");
        const allowed = (res.headers.get("access-control-allow-headers") ?? "").split(", ");
        for (const header of ["authorization", "content-type", "x-request-id"]) {
          assert.ok(allowed.includes(header), header);
        }
        assert.equal(res.headers.get("access-control-max-age"), "600");
        assert.equal(res.headers.get("vary"), "Origin");
        // Bearer headers and signatures, never cookies: no credentials are granted.
        assert.equal(res.headers.get("access-control-allow-credentials"), null);
        assert.match(res.headers.get("x-request-id") ?? "", /\S/);
      }
    });

    it("an origin not listed: 403 in the service's error shape, nothing granted", async () => {
      for (const origin of [
        "https://evil.example.com",
        "https://app.example.com.evil.example",
        "http://app.example.com",
        "null",
      ]) {
        const res = await preflight(service.publicUrl, origin);
        assert.equal(res.status, 403, origin);
        assert.deepEqual(JSON.parse(res.text), {
          code: 7,
          message: "origin not allowed (CORS_ORIGINS)",
          details: [],
        });
        assert.equal(res.headers.get("access-control-allow-origin"), null);
        assert.equal(res.headers.get("access-control-allow-methods"), null);
        assert.equal(res.headers.get("vary"), "Origin");
        assert.match(res.headers.get("x-request-id") ?? "", /\S/);
      }
    });

    it("each preflight has its log line and its count, with the caller's request id", async () => {
      const requestId = `cors-${randomUUID()}`;
      await send(`${service.publicUrl}${PATH}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://evil.example.com",
          "access-control-request-method": "POST",
          "x-request-id": requestId,
        },
      });
      // The line is written once the answer is sent, which may be a moment
      // after the client has it; a chunk may hold several lines.
      const lineOf = () =>
        service.logs
          .flatMap((chunk) => chunk.split("\n"))
          .filter((text) => text !== "")
          .map((text) => JSON.parse(text) as Record<string, unknown>)
          .find((entry) => entry.requestId === requestId);
      for (let i = 0; i < 50 && lineOf() === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const line = lineOf();
      assert.ok(line !== undefined);
      assert.equal(line.method, "cors-preflight");
      assert.equal(line.code, "PermissionDenied");
      const metrics = samples(await (await fetch(`${service.internalUrl}/metrics`)).text());
      const count = (code: string) =>
        metrics.get(
          `perps_token_requests_total{method="cors-preflight",protocol="http",code="${code}"}`,
        ) ?? 0;
      assert.ok(count("ok") >= 1);
      assert.ok(count("permission_denied") >= 1);
    });

    it("answers to a listed origin say so and expose the headers the SDK reads", async () => {
      const res = await send(`${service.publicUrl}${PATH}`, {
        headers: { origin: "https://app.example.com", authorization: "Bearer nope" },
      });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example.com");
      const exposed = (res.headers.get("access-control-expose-headers") ?? "").split(", ");
      for (const header of ["x-request-id", "retry-after", "www-authenticate"]) {
        assert.ok(exposed.includes(header), header);
      }
      assert.equal(res.headers.get("vary"), "Origin");
      const other = await send(`${service.publicUrl}${PATH}`, {
        headers: { origin: "https://evil.example.com", authorization: "Bearer nope" },
      });
      assert.equal(other.status, 401);
      assert.equal(other.headers.get("access-control-allow-origin"), null);
      assert.equal(other.headers.get("access-control-expose-headers"), null);
    });

    it("leaves alone what is not a preflight on a REST path", async () => {
      // OPTIONS without Access-Control-Request-Method: the path's 405, as before.
      const options = await send(`${service.publicUrl}${PATH}`, {
        method: "OPTIONS",
        headers: { origin: "https://app.example.com" },
      });
      assert.equal(options.status, 405);
      // Other paths get no CORS at all.
      const health = await preflight(
        service.publicUrl,
        "https://app.example.com",
        "GET",
        "/healthz",
      );
      assert.equal(health.headers.get("access-control-allow-origin"), null);
    });

    it("is off by default: no origin is granted anything", async () => {
      const res = await preflight(plain.publicUrl, "https://app.example.com");
      assert.notEqual(res.status, 204);
      assert.equal(res.headers.get("access-control-allow-origin"), null);
      const get = await send(`${plain.publicUrl}${PATH}`, {
        headers: { origin: "https://app.example.com", authorization: "Bearer nope" },
      });
      assert.equal(get.headers.get("access-control-allow-origin"), null);
      assert.equal(get.headers.get("vary"), null);
    });
  });

  describe("a real browser (chromium)", () => {
    let browser: Browser;
    before(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // Tests may run as root, where chromium's sandbox cannot start.
        args: ["--no-sandbox"],
      });
    });
    after(async () => {
      await browser?.close();
    });

    async function pageAt(url: string): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(url);
      return page;
    }

    it("a page of a listed origin creates a token with a signed request and lists it", async () => {
      const user = await registeredUser();
      const page = await pageAt(`${listed.origin}/`);
      try {
        const created = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: await createBody(user, "from-the-browser"),
        });
        assert.ok(created.ok, JSON.stringify(created));
        assert.equal(created.status, 201, created.text);
        // Exposed, so the page can read it.
        assert.match(created.requestId ?? "", /\S/);
        const { token, id } = JSON.parse(created.text) as { token: string; id: string };

        const listedTokens = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "GET",
          headers: { authorization: `Bearer ${token}` },
        });
        assert.ok(listedTokens.ok, JSON.stringify(listedTokens));
        assert.equal(listedTokens.status, 200);
        const { tokens: names } = JSON.parse(listedTokens.text) as {
          tokens: { id: string; name: string }[];
        };
        assert.deepEqual(
          names.map((t) => [t.id, t.name]),
          [[id, "from-the-browser"]],
        );

        const refused = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "GET",
          headers: { authorization: "Bearer nope" },
        });
        assert.ok(refused.ok, JSON.stringify(refused));
        assert.equal(refused.status, 401);
        assert.match(refused.challenge ?? "", /^Bearer realm="perps-tokens"/);
      } finally {
        await page.close();
      }
    });

    it("a page of an origin not listed cannot call the API: the browser's fetch throws", async () => {
      const user = await registeredUser();
      const token = (await tokens.createToken(await signedCreate(user, { name: "kept" }))).token;
      const page = await pageAt(`${unlisted.origin}/`);
      try {
        const created = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: await createBody(user, "never-made"),
        });
        assert.deepEqual(created.ok ? created : { ok: false, name: created.name }, {
          ok: false,
          name: "TypeError",
        });
        const read = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "GET",
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(read.ok, false);
        assert.equal(read.ok ? "" : read.name, "TypeError");
      } finally {
        await page.close();
      }
      // The preflight was refused, so the create never reached the service.
      const list = await send(`${service.publicUrl}${PATH}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const { tokens: names } = JSON.parse(list.text) as { tokens: { name: string }[] };
      assert.deepEqual(
        names.map((t) => t.name),
        ["kept"],
      );
    });

    it("same-origin calls are untouched: a page on the public listener itself calls the API", async () => {
      const user = await registeredUser();
      const page = await pageAt(`${service.publicUrl}/healthz`);
      try {
        const created = await fetchFromPage(page, `${service.publicUrl}${PATH}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: await createBody(user, "same-origin"),
        });
        assert.ok(created.ok, JSON.stringify(created));
        assert.equal(created.status, 201, created.text);
      } finally {
        await page.close();
      }
    });
  });
});
