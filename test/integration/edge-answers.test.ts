import assert from "node:assert/strict";
import { connect as connectH2, type IncomingHttpHeaders } from "node:http2";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { samples } from "../support/prometheus-samples.js";
import { rawExchange } from "../support/raw-exchange.js";
import { serviceSuite } from "../support/service-suite.js";

// What operators' tools, balancers and other gRPC and HTTP clients meet at
// the edges of the service: health checks by HEAD, 405 on the plain
// endpoints, UNIMPLEMENTED for a gRPC method not served, and the service's
// own JSON error for a request without Host and for CONNECT.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

function parseRaw(text: string): RawAnswer {
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/** A call of `path` by @grpc/grpc-js, as any generated client makes it; resolves with its status. */
function grpcCall(address: string, path: string): Promise<grpc.ServiceError | undefined> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (message: Buffer) => message,
      (bytes: Buffer) => bytes,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 5000 },
      (err) => {
        client.close();
        resolve(err ?? undefined);
      },
    );
  });
}

describe("answers at the edges", () => {
  const { service } = serviceSuite();

  /** The log line (parsed) of this request id; throws unless there is exactly one. */
  async function lineOf(requestId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 50; i++) {
      const lines = service.logs
        .join("")
        .split("\n")
        .filter((line) => line.includes(requestId))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      if (lines.length > 0) {
        assert.equal(lines.length, 1, JSON.stringify(lines));
        return lines[0] ?? {};
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no log line for ${requestId}`);
  }

  async function requestsTotal(labels: string): Promise<number> {
    const text = await (await fetch(`${service.internalUrl}/metrics`)).text();
    return samples(text).get(`perps_token_requests_total{${labels}}`) ?? 0;
  }

  describe("health checks every balancer can use", () => {
    const endpoints = [
      ["public", "/healthz"],
      ["public", "/readyz"],
      ["public", "/openapi.json"],
      ["internal", "/healthz"],
      ["internal", "/readyz"],
      ["internal", "/metrics"],
    ] as const;
    const base = (listener: "public" | "internal") =>
      listener === "public" ? service.publicUrl : service.internalUrl;

    it("a probe is counted but writes no info line (balancers ask every few seconds); other answers do", async () => {
      const ids: string[] = [];
      for (const url of [
        `${service.publicUrl}/healthz`,
        `${service.internalUrl}/readyz`,
        `${service.publicUrl}/openapi.json`,
      ]) {
        const res = await fetch(url);
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        ids.push(res.headers.get("x-request-id") ?? "");
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const logged = (id: string) => service.logs.join("").includes(`"requestId":"${id}"`);
      assert.deepEqual(ids.map(logged), [false, false, true]);
      const metrics = await (await fetch(`${service.internalUrl}/metrics`)).text();
      const ok = samples(metrics).get(
        'perps_token_requests_total{method="http",protocol="http",code="ok"}',
      );
      assert.ok((ok ?? 0) >= 3, `probes are counted: ${ok}`);
    });

    for (const [listener, path] of endpoints) {
      it(`HEAD ${path} (${listener}) answers as GET, without a body`, async () => {
        const got = await fetch(`${base(listener)}${path}`);
        const getBody = await got.arrayBuffer();
        const head = await fetch(`${base(listener)}${path}`, { method: "HEAD" });
        assert.equal(head.status, got.status);
        assert.equal(head.headers.get("content-type"), got.headers.get("content-type"));
        assert.equal((await head.arrayBuffer()).byteLength, 0);
        if (path !== "/metrics") {
          // The metrics change between the two requests; the others do not.
          assert.equal(head.headers.get("content-length"), String(getBody.byteLength));
        }
        assert.match(head.headers.get("x-request-id") ?? "", UUID);
      });

      for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
        it(`${method} ${path} (${listener}): 405 with Allow, in the service's error shape`, async () => {
          const res = await fetch(`${base(listener)}${path}`, {
            method,
            ...(method === "OPTIONS" ? {} : { body: "{}" }),
          });
          assert.equal(res.status, 405);
          assert.equal(res.headers.get("allow"), "GET, HEAD");
          assert.equal(res.headers.get("content-type"), "application/json");
          assert.deepEqual(await res.json(), {
            code: 12,
            message: `method ${method} is not allowed here`,
            details: [],
          });
          const requestId = res.headers.get("x-request-id") ?? "";
          assert.match(requestId, UUID);
          const line = await lineOf(requestId);
          assert.equal(line.code, "Unimplemented");
        });
      }
    }

    it("HEAD over HTTP/2 too", async () => {
      const session = connectH2(service.publicUrl);
      try {
        const { headers, bytes } = await new Promise<{
          headers: IncomingHttpHeaders;
          bytes: number;
        }>((resolve, reject) => {
          const stream = session.request({ ":method": "HEAD", ":path": "/readyz" });
          let headers: IncomingHttpHeaders = {};
          let bytes = 0;
          stream.on("response", (h) => {
            headers = h;
          });
          stream.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
          });
          stream.on("end", () => resolve({ headers, bytes }));
          stream.on("error", reject);
          stream.end();
        });
        assert.equal(headers[":status"], 200);
        assert.equal(bytes, 0);
      } finally {
        session.close();
      }
    });

    it("paths a listener does not serve keep their 404; /auth keeps every method", async () => {
      assert.equal((await fetch(`${service.publicUrl}/metrics`, { method: "POST" })).status, 404);
      assert.equal((await fetch(`${service.internalUrl}/openapi.json`)).status, 404);
      // A proxy asks /auth with the method of the request it checks.
      const auth = await fetch(`${service.internalUrl}/auth`, { method: "POST" });
      assert.equal(auth.status, 401);
    });
  });

  describe("gRPC answers at the edges", () => {
    const cases = [
      {
        listener: "public",
        path: "/perps.token.v1.TokenService/NoSuchMethod",
        message: "unknown method NoSuchMethod for service perps.token.v1.TokenService",
      },
      {
        listener: "public",
        // Served on the internal listener only.
        path: "/perps.token.v1.UserKeyService/PutUserKey",
        message: "unknown service perps.token.v1.UserKeyService",
      },
      {
        listener: "internal",
        path: "/no.such.Service/Method",
        message: "unknown service no.such.Service",
      },
      {
        listener: "internal",
        path: "/grpc.health.v1.Health/NoSuchMethod",
        message: "unknown method NoSuchMethod for service grpc.health.v1.Health",
      },
    ] as const;
    for (const { listener, path, message } of cases) {
      it(`@grpc/grpc-js calling ${path} (${listener}, HTTP/2): UNIMPLEMENTED naming it`, async () => {
        const address = listener === "public" ? service.publicAddress : service.internalAddress;
        const err = await grpcCall(address, path);
        assert.equal(err?.code, grpc.status.UNIMPLEMENTED, String(err));
        assert.equal(err?.details, message);
        const requestId = err?.metadata.get("x-request-id")[0];
        assert.equal(typeof requestId, "string");
        const line = await lineOf(String(requestId));
        assert.equal(line.code, "Unimplemented");
        assert.equal(line.protocol, "grpc");
      });
    }

    for (const contentType of ["application/grpc-web+proto", "application/grpc-web"]) {
      it(`gRPC-Web over HTTP/1.1 (${contentType}): 200, grpc-status 12 in the trailer frame`, async () => {
        const before = await requestsTotal(
          'method="http",protocol="grpc-web",code="unimplemented"',
        );
        const res = await fetch(`${service.publicUrl}/perps.token.v1.TokenService/NoSuchMethod`, {
          method: "POST",
          headers: { "content-type": contentType, "x-grpc-web": "1" },
          body: Buffer.from([0, 0, 0, 0, 0]),
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), contentType);
        const body = Buffer.from(await res.arrayBuffer());
        assert.equal(body[0], 0x80, "one frame: the trailers");
        assert.equal(body.readUInt32BE(1), body.length - 5);
        const trailer = body.subarray(5).toString();
        assert.match(trailer, /^grpc-status: ?12\r$/m);
        assert.match(
          trailer,
          /^grpc-message: ?unknown%20method%20NoSuchMethod%20for%20service%20perps\.token\.v1\.TokenService\r$/m,
        );
        const requestId = res.headers.get("x-request-id") ?? "";
        assert.match(trailer, new RegExp(`^x-request-id: ?${requestId}\\r$`, "m"));
        assert.equal((await lineOf(requestId)).code, "Unimplemented");
        const after = await requestsTotal('method="http",protocol="grpc-web",code="unimplemented"');
        assert.equal(after, before + 1);
      });
    }

    it("gRPC-Web text: the trailer frame in base64", async () => {
      const res = await fetch(`${service.internalUrl}/no.such.Service/Method`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web-text" },
        body: Buffer.from([0, 0, 0, 0, 0]).toString("base64"),
      });
      assert.equal(res.status, 200);
      const frame = Buffer.from(await res.text(), "base64");
      assert.equal(frame[0], 0x80);
      assert.match(frame.subarray(5).toString(), /^grpc-status: ?12\r$/m);
    });

    it("a REST or Connect client of an unknown path still gets the JSON 404", async () => {
      const res = await fetch(`${service.publicUrl}/perps.token.v1.TokenService/NoSuchMethod`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: number }).code, 5);
    });
  });

  describe("HTTP/1.1 without Host, and CONNECT", () => {
    for (const listener of ["public", "internal"] as const) {
      it(`an HTTP/1.1 request without Host (${listener}): 400, the service's JSON error`, async () => {
        const base = listener === "public" ? service.publicUrl : service.internalUrl;
        const answer = parseRaw(
          await rawExchange(base, "POST /user/tokens HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}"),
        );
        assert.equal(answer.status, 400);
        assert.equal(answer.headers.get("content-type"), "application/json");
        assert.deepEqual(JSON.parse(answer.body), {
          code: 3,
          message: "an HTTP/1.1 request must have a Host header",
          details: [],
        });
        const requestId = answer.headers.get("x-request-id") ?? "";
        assert.match(requestId, UUID);
        assert.equal((await lineOf(requestId)).code, "InvalidArgument");
      });
    }

    it("an HTTP/1.0 request need not have Host", async () => {
      const answer = parseRaw(
        await rawExchange(service.publicUrl, "GET /healthz HTTP/1.0\r\n\r\n"),
      );
      assert.equal(answer.status, 200);
    });

    it("CONNECT over HTTP/1.1: 501, the service's JSON error, logged and counted", async () => {
      const labels = 'method="http",protocol="http",code="unimplemented"';
      const before = await requestsTotal(labels);
      const answer = parseRaw(
        await rawExchange(
          service.publicUrl,
          "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\nx-request-id: connect-1\r\n\r\n",
        ),
      );
      assert.equal(answer.status, 501);
      assert.equal(answer.headers.get("x-request-id"), "connect-1");
      assert.deepEqual(JSON.parse(answer.body), {
        code: 12,
        message: "CONNECT is not supported: this service is not a proxy",
        details: [],
      });
      const line = await lineOf("connect-1");
      assert.equal(line.code, "Unimplemented");
      assert.equal(line.status, 501);
      // `before` was read by a GET /metrics, itself counted in another series.
      assert.equal(await requestsTotal(labels), before + 1);
    });

    it("CONNECT over HTTP/2: the same answer", async () => {
      const session = connectH2(service.internalUrl);
      try {
        const { headers, body } = await new Promise<{ headers: IncomingHttpHeaders; body: string }>(
          (resolve, reject) => {
            const stream = session.request({
              ":method": "CONNECT",
              ":authority": "example.com:443",
            });
            let headers: IncomingHttpHeaders = {};
            let body = "";
            stream.on("response", (h) => {
              headers = h;
            });
            stream.setEncoding("utf8");
            stream.on("data", (chunk: string) => {
              body += chunk;
            });
            stream.on("end", () => resolve({ headers, body }));
            stream.on("error", reject);
          },
        );
        assert.equal(headers[":status"], 501);
        assert.match(String(headers["x-request-id"]), UUID);
        assert.equal((JSON.parse(body) as { code: number }).code, 12);
        assert.equal((await lineOf(String(headers["x-request-id"]))).code, "Unimplemented");
      } finally {
        session.close();
      }
    });
  });
});
