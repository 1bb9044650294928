import assert from "node:assert/strict";
import { connect as connectTcp } from "node:net";
import { describe, it } from "node:test";
import { rawExchange } from "../support/raw-exchange.js";
import { CREATE, type Labels, refusalTelemetrySuite } from "../support/refusal-telemetry-suite.js";

// Every answer is observable, continued (refusal-telemetry.test.ts): the
// plain endpoints.

describe("every answer is observable", () => {
  const { service, count, linesOf, expectObserved, idHeader } = refusalTelemetrySuite();

  describe("plain endpoints", () => {
    const plain = (code: string): Labels => ({ method: "http", protocol: "http", code });
    const get = (url: () => string) => async (requestId: string | undefined) => {
      const res = await fetch(url(), { headers: idHeader(requestId) });
      await res.arrayBuffer();
      return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
    };
    it("/healthz on the public listener", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.publicUrl}/healthz`),
        { status: 200 },
      ));
    it("/readyz on the internal listener", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.internalUrl}/readyz`),
        { status: 200 },
      ));
    it("/openapi.json", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.publicUrl}/openapi.json`),
        {
          status: 200,
        },
      ));
    it("/metrics", () =>
      expectObserved(
        plain("ok"),
        get(() => `${service.internalUrl}/metrics`),
        { status: 200 },
      ));
    for (const [name, url] of [
      ["/healthz", () => `${service.publicUrl}/healthz`],
      ["/readyz", () => `${service.internalUrl}/readyz`],
      ["/openapi.json", () => `${service.publicUrl}/openapi.json`],
      ["/metrics", () => `${service.internalUrl}/metrics`],
    ] as const) {
      it(`HEAD ${name}`, () =>
        expectObserved(
          plain("ok"),
          async (requestId) => {
            const res = await fetch(url(), { method: "HEAD", headers: idHeader(requestId) });
            return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
          },
          { status: 200 },
        ));
      it(`POST ${name}: 405`, () =>
        expectObserved(
          plain("unimplemented"),
          async (requestId) => {
            const res = await fetch(url(), {
              method: "POST",
              headers: idHeader(requestId),
              body: "{}",
            });
            await res.arrayBuffer();
            return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
          },
          { status: 405 },
        ));
    }
    it("an HTTP/1.1 request without Host: 400", () =>
      expectObserved(
        plain("invalid_argument"),
        async (requestId) => {
          const text = await rawExchange(
            service.publicUrl,
            `GET /healthz HTTP/1.1\r\nx-request-id: ${requestId ?? ""}\r\n\r\n`,
            { end: true },
          );
          return {
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
            requestId: /^x-request-id: (.*)\r$/im.exec(text)?.[1],
          };
        },
        { status: 400 },
      ));
    it("the internal listener's 404", () =>
      expectObserved(
        plain("not_found"),
        get(() => `${service.internalUrl}/nothing-here`),
        {
          status: 404,
        },
      ));
  });

  it("a request abandoned before the answer is counted as canceled, at most a debug line", async () => {
    const labels = { method: CREATE, protocol: "rest", code: "canceled" };
    const requestId = `abandoned-${process.pid}`;
    const before = await count(labels);
    const { hostname, port } = new URL(service.publicUrl);
    await new Promise<void>((resolve, reject) => {
      const socket = connectTcp(Number(port), hostname, () => {
        socket.write(
          `POST /user/tokens HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
            `x-request-id: ${requestId}\r\ncontent-length: 100\r\n\r\n{"userId":`,
          () => setTimeout(() => socket.destroy(), 50),
        );
      });
      socket.on("error", reject);
      socket.on("close", () => resolve());
    });
    let after = await count(labels);
    for (let i = 0; i < 50 && after < before + 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await count(labels);
    }
    assert.equal(after, before + 1);
    // At most a debug line (this suite logs at debug), never info or above.
    const lines = linesOf(requestId);
    assert.ok(lines.length <= 1, JSON.stringify(lines));
    for (const line of lines) {
      assert.equal(line.level, 20, JSON.stringify(line));
    }
  });
});
