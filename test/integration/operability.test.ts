import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { connect as connectH2 } from "node:http2";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createGrpcClient, isGrpcError } from "../support/grpc-client.js";
import { samples } from "../support/prometheus-samples.js";
import { restJson } from "../support/rest-json.js";
import { serviceSuite } from "../support/service-suite.js";
import { newUser, signedCreate } from "../support/signing.js";
import { createOperatorGrpcClient, operatorHeaders } from "../support/test-operator.js";
import { startTestRedis } from "../support/test-redis.js";
import { tlsServiceSuite } from "../support/tls-service-suite.js";

const run = promisify(execFile);
const BUF = resolve(import.meta.dirname, "../../node_modules/.bin/buf");

describe("operability", () => {
  const { service } = serviceSuite();

  it("serves Prometheus metrics on the internal listener only", async () => {
    const user = await newUser();
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    const tokens = createGrpcClient(TokenService, service.internalAddress);
    try {
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      const ok = await fetch(`${service.publicUrl}/user/tokens`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: restJson(await signedCreate(user)),
      });
      assert.equal(ok.status, 201);
      await assert.rejects(tokens.createToken(await signedCreate(user, { expiresIn: 0n })), (err) =>
        isGrpcError(err, grpc.status.INVALID_ARGUMENT),
      );
    } finally {
      keys.close();
      tokens.close();
    }
    const res = await fetch(`${service.internalUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    const m = samples(await res.text());
    const create = 'method="perps.token.v1.TokenService/CreateToken"';
    assert.equal(m.get(`perps_token_requests_total{${create},protocol="rest",code="ok"}`), 1);
    assert.equal(
      m.get(`perps_token_requests_total{${create},protocol="grpc",code="invalid_argument"}`),
      1,
    );
    assert.equal(
      m.get(
        'perps_token_requests_total{method="perps.token.v1.UserKeyService/PutUserKey",protocol="grpc",code="ok"}',
      ),
      1,
    );
    assert.equal(m.get("perps_token_tokens_created_total"), 1);
    assert.equal(m.get(`perps_token_request_duration_seconds_count{${create},protocol="rest"}`), 1);
    assert.ok((m.get("process_resident_memory_bytes") ?? 0) > 0);
    // Redis calls are timed: the REST create read the keys and ran the create script.
    assert.ok(
      (m.get('perps_token_redis_duration_seconds_count{operation="token.create"}') ?? 0) >= 1,
    );
    assert.ok((m.get('perps_token_redis_duration_seconds_count{operation="keys.read"}') ?? 0) >= 1);
    assert.equal((await fetch(`${service.publicUrl}/metrics`)).status, 404);
  });

  it("echoes the caller's x-request-id, or makes one, and logs it", async () => {
    const given = "req-123.abc";
    const res = await fetch(`${service.publicUrl}/user/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": given },
      body: restJson(await signedCreate(await newUser())),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("x-request-id"), given);
    assert.ok(service.logs.some((l) => l.includes(`"requestId":"${given}"`)));
    const made = await fetch(`${service.publicUrl}/user/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "bad id with spaces" },
      body: restJson(await signedCreate(await newUser())),
    });
    assert.match(made.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  });

  it("serves the OpenAPI document on the public listener", async () => {
    const res = await fetch(`${service.publicUrl}/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    assert.match(doc.openapi, /^3\.1\./);
    assert.ok("/user/tokens" in doc.paths);
    assert.equal((await fetch(`${service.internalUrl}/openapi.json`)).status, 404);
  });

  it("answers gRPC server reflection: buf curl lists and calls without proto files", async () => {
    const url = service.internalUrl;
    const list = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-services", url]);
    for (const name of [
      "perps.token.v1.TokenService",
      "perps.token.v1.UserKeyService",
      "perps.token.v1.TokenIntrospectionService",
      "perps.token.v1.TokenAdminService",
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
    ]) {
      assert.ok(list.stdout.includes(name), list.stdout);
    }
    const methods = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-methods", url]);
    assert.ok(methods.stdout.includes("perps.token.v1.TokenService/CreateToken"));
    const user = await newUser();
    const call = await run(BUF, [
      "curl",
      "--http2-prior-knowledge",
      "--protocol",
      "grpc",
      "-H",
      `authorization: ${operatorHeaders().authorization}`,
      "-d",
      JSON.stringify({ userId: user.userId, publicKey: user.publicKey }),
      `${url}/perps.token.v1.UserKeyService/PutUserKey`,
    ]);
    assert.equal(call.stdout.trim(), "{}");
    const alpha = await run(BUF, [
      "curl",
      "--http2-prior-knowledge",
      "--reflect-protocol",
      "grpc-v1alpha",
      "--list-services",
      url,
    ]);
    assert.ok(alpha.stdout.includes("perps.token.v1.TokenService"));
    // Reflection is internal only.
    await assert.rejects(
      run(BUF, ["curl", "--http2-prior-knowledge", "--list-services", service.publicUrl]),
    );
  });
});

describe("TLS", () => {
  const { service, pems } = tlsServiceSuite(startTestRedis);

  const httpsUrl = (base: string) => base.replace("http://", "https://");

  it("speaks HTTP/1.1 over TLS (ALPN http/1.1)", async () => {
    const { status, alpn } = await new Promise<{ status: number; alpn: string | false | null }>(
      (done, fail) => {
        const url = `${httpsUrl(service.publicUrl)}/healthz`;
        const agent = new HttpsAgent({ ca: pems.cert, ALPNProtocols: ["http/1.1"] });
        const req = httpsRequest(url, { agent }, (res) => {
          res.resume();
          done({ status: res.statusCode ?? 0, alpn: (res.socket as TLSSocket).alpnProtocol });
        });
        req.on("error", fail);
        req.end();
      },
    );
    assert.equal(status, 200);
    assert.equal(alpn, "http/1.1");
  });

  it("speaks HTTP/2 over TLS (ALPN h2), REST included", async () => {
    const session = connectH2(httpsUrl(service.publicUrl), { ca: pems.cert });
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((done, fail) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/user/tokens",
          "content-type": "application/json",
        });
        let status = 0;
        let body = "";
        stream.on("response", (headers) => {
          status = Number(headers[":status"]);
        });
        stream.on("data", (c: Buffer) => {
          body += c.toString();
        });
        stream.on("end", () => done({ status, body }));
        stream.on("error", fail);
        stream.end("{}");
      });
      assert.equal(session.alpnProtocol, "h2");
      assert.equal(status, 400);
      assert.match(body, /"code":3/);
    } finally {
      session.close();
    }
  });

  it("serves gRPC over TLS to @grpc/grpc-js", async () => {
    const credentials = grpc.credentials.createSsl(Buffer.from(pems.cert));
    // The server name sent is the certificate's DNS name: grpc-js would send
    // the target's IP address, which RFC 6066 forbids (Node's DEP0123).
    const options = { "grpc.ssl_target_name_override": "localhost" };
    const Client = grpc.makeGenericClientConstructor({}, "Health");
    const client = new Client(service.internalAddress, credentials, options);
    try {
      await new Promise<void>((done, fail) =>
        client.waitForReady(Date.now() + 5000, (err) => (err ? fail(err) : done())),
      );
    } finally {
      client.close();
    }
    // And a refused call over TLS, end to end.
    const keys = createOperatorGrpcClient(
      UserKeyService,
      service.internalAddress,
      credentials,
      options,
    );
    try {
      await assert.rejects(keys.putUserKey({ userId: "x", publicKey: "" }), (err) =>
        isGrpcError(err, grpc.status.INVALID_ARGUMENT),
      );
    } finally {
      keys.close();
    }
  });

  it("refuses cleartext on a TLS port", async () => {
    await assert.rejects(fetch(`${service.publicUrl}/healthz`));
  });
});
