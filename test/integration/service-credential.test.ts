import assert from "node:assert/strict";
import { connect } from "node:http2";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { trailerParse } from "@connectrpc/connect/protocol-grpc-web";
import { createIntrospectionClient, TokenApiError } from "../../client/src/sdk/node.js";
import { credentialLookup, parseCredentialsFile } from "../../src/admin-auth/credentials-file.js";
import { grpcStatusOf } from "../support/grpc-status-call.js";
import { holdStream, within } from "../support/held-stream.js";
import { credentialsText } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 29: an optional credential of the calling service for IntrospectToken
// and /auth (SERVICE_CREDENTIALS_FILE). Off by default (every other suite
// calls them without one); on, a caller without a listed service's secret in
// X-Service-Credential is refused.

const EDGE = { name: "edge-proxy", secret: "svc_secret-of-the-edge-proxy" };
const INTROSPECT = "/perps.token.v1.TokenIntrospectionService/IntrospectToken";

describe("service credential for IntrospectToken and /auth", () => {
  let redis: TestRedis;
  let service: TestService;

  before(async () => {
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      serviceOf: credentialLookup(
        parseCredentialsFile(credentialsText([EDGE]), "t", "SERVICE_CREDENTIALS_FILE"),
      ),
    });
  });
  after(async () => {
    await service?.stop();
    await redis?.dispose();
  });

  const introspect = (headers: Record<string, string>) =>
    fetch(`${service.internalUrl}${INTROSPECT}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ token: "pt_unknown" }),
    });

  it("IntrospectToken: UNAUTHENTICATED without the service's secret, on Connect and gRPC", async () => {
    for (const headers of [{}, { "x-service-credential": "wrong" }] as Record<string, string>[]) {
      const res = await introspect(headers);
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 401);
      assert.equal(body.code, "unauthenticated");
      assert.match(body.message, /X-Service-Credential: <service secret>/);
    }
    assert.equal(await grpcStatusOf(service.internalUrl, INTROSPECT, new Uint8Array(5)), "16");
    const ok = await introspect({ "x-service-credential": EDGE.secret });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), {});
    assert.equal(
      await grpcStatusOf(service.internalUrl, INTROSPECT, new Uint8Array(5), {
        "x-service-credential": EDGE.secret,
      }),
      "0",
    );
  });

  it("IntrospectToken: the credential is checked before any body byte (issue 34), on every path", async () => {
    const session = connect(service.internalUrl);
    try {
      for (const contentType of [
        "application/grpc",
        "application/grpc-web+proto",
        "application/json",
      ]) {
        // Headers only, the body never sent nor ended: a service that reads
        // it before asking for the credential never answers.
        const held = holdStream(session, INTROSPECT, { "content-type": contentType });
        const answer = await within(held.closed, 10_000, `${contentType}: the refusal`);
        if (contentType === "application/json") {
          assert.equal(answer.headers[":status"], 401);
          const body = JSON.parse(answer.body.toString()) as { code: string };
          assert.equal(body.code, "unauthenticated");
        } else {
          const status =
            contentType === "application/grpc"
              ? answer.trailers["grpc-status"]
              : trailerParse(answer.body.subarray(5)).get("grpc-status");
          assert.equal(status, "16", contentType);
        }
        assert.equal(answer.rstCode, 0, "reset with NO_ERROR: no body is read");
      }
    } finally {
      session.destroy();
    }
  });

  it("the SDK's introspection client sends serviceCredential, over Connect and gRPC", async () => {
    for (const transport of ["connect", "grpc"] as const) {
      const without = createIntrospectionClient({ baseUrl: service.internalUrl, transport });
      const withIt = createIntrospectionClient({
        baseUrl: service.internalUrl,
        transport,
        serviceCredential: EDGE.secret,
      });
      try {
        await assert.rejects(without.introspectToken("pt_x"), (err: unknown) => {
          return err instanceof TokenApiError && err.code === Code.Unauthenticated;
        });
        assert.equal((await withIt.introspectToken("pt_x")).active, false);
      } finally {
        without.close();
        withIt.close();
      }
    }
  });

  it("/auth: 403 without the proxy's secret (never a client's 401 challenge); with it, as usual", async () => {
    for (const headers of [{}, { "x-service-credential": "wrong" }] as Record<string, string>[]) {
      const res = await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: "Bearer pt_x", ...headers },
      });
      assert.equal(res.status, 403);
      assert.equal(res.headers.get("www-authenticate"), null);
      assert.match(await res.text(), /X-Service-Credential/);
    }
    const res = await fetch(`${service.internalUrl}/auth`, {
      headers: { "x-service-credential": EDGE.secret },
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="perps-tokens"');
    await res.arrayBuffer();
    assert.equal(
      service.logs.some((line) => line.includes(EDGE.secret)),
      false,
      "the secret is never logged",
    );
  });
});
