import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type * as grpc from "@grpc/grpc-js";
import {
  IntrospectTokenRequestSchema,
  TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { tokenCallsOnEveryProtocol } from "../support/every-protocol.js";
import {
  bearer,
  type Created,
  createToken,
  forwardAuth,
  register,
} from "../support/forward-auth-calls.js";
import { createGrpcClient } from "../support/grpc-client.js";
import { samples } from "../support/prometheus-samples.js";
import { restJson } from "../support/rest-json.js";
import { serviceSuite } from "../support/service-suite.js";
import { type CreateFields, newUser, signedCreate, type TestUser } from "../support/signing.js";

// Scopes and IP allow-lists (issue 42), tried on every protocol against the
// whole service on a private Redis: made by a signed create, answered by
// IntrospectToken and `/auth` (each asked twice: the first answer reads
// Redis through the pipeline, the second comes from the check lane's cache),
// listed by ListTokens.

/** A create's outcome on any protocol: its gRPC code (0 when created), message and token. */
interface Outcome {
  code: number;
  message: string;
  created?: Created;
}

async function outcomeOf(call: Promise<unknown>): Promise<Outcome> {
  try {
    const { id, token } = (await call) as Created;
    return { code: 0, message: "", created: { id, token } };
  } catch (err) {
    if (err instanceof ConnectError) {
      return { code: err.code, message: err.rawMessage };
    }
    const e = err as grpc.ServiceError;
    return { code: e.code, message: decodeURIComponent(e.details) };
  }
}

describe("token scopes and IP allow-lists", () => {
  const { service } = serviceSuite();
  let stamp = Date.now();
  const users = new Map<string, TestUser>();

  async function userOf(label: string): Promise<TestUser> {
    const known = users.get(label);
    if (known !== undefined) {
      return known;
    }
    const user = await newUser();
    await register(service, user);
    users.set(label, user);
    return user;
  }

  function protocols() {
    const grpcTokens = createGrpcClient(TokenService, service.publicAddress);
    const rest = async (method: string, req: object): Promise<Outcome> => {
      const res = await fetch(`${service.publicUrl}/user/tokens`, {
        method,
        headers: { "content-type": "application/json" },
        body: restJson(req as Record<string, string>),
      });
      const body = (await res.json()) as { code?: number; message?: string } & Partial<Created>;
      if (res.status === 201 && body.id !== undefined && body.token !== undefined) {
        return { code: 0, message: "", created: { id: body.id, token: body.token } };
      }
      assert.equal(res.status, body.code === Code.InvalidArgument ? 400 : res.status);
      return { code: body.code ?? -1, message: body.message ?? "" };
    };
    return {
      calls: tokenCallsOnEveryProtocol(service.publicUrl, grpcTokens, rest, outcomeOf),
      close: () => grpcTokens.close(),
    };
  }

  const created = (user: TestUser, fields: Parameters<typeof createToken>[2]) =>
    createToken(service.publicUrl, user, fields);

  const introspectors = () => {
    const h2 = createClient(
      TokenIntrospectionService,
      createGrpcTransport({ baseUrl: service.internalUrl }),
    );
    const connect = createClient(
      TokenIntrospectionService,
      createConnectTransport({ baseUrl: service.internalUrl, httpVersion: "1.1" }),
    );
    return { gRPC: h2, Connect: connect };
  };

  it("create takes scopes and allowedIps on every protocol, signed over the longer message", async () => {
    const { calls, close } = protocols();
    try {
      for (const protocol of calls) {
        const user = await userOf(protocol.name);
        const fields = {
          name: `bot ${protocol.name}`,
          scopes: ["withdraw", "read"],
          allowedIps: ["203.0.113.7", "2001:db8::/32"],
          timestamp: BigInt(stamp++),
        };
        const req = await signedCreate(user, fields);
        const outcome = await protocol.createToken(req);
        assert.equal(outcome.code, 0, `${protocol.name}: ${outcome.message}`);
        const { token } = outcome.created ?? { token: "" };
        const introspect = introspectors().gRPC;
        const answer = await introspect.introspectToken({ token, clientIp: "2001:db8::9" });
        assert.equal(answer.active, true, protocol.name);
        assert.deepEqual(answer.scopes, ["read", "withdraw"], protocol.name);
        // The same fields signed as the seed's message (the lists left out of it) are refused.
        const unsigned = {
          ...(await signedCreate(user, { ...fields, scopes: undefined, allowedIps: undefined })),
          scopes: fields.scopes,
          allowedIps: fields.allowedIps,
        };
        const refused = await protocol.createToken(unsigned);
        assert.equal(refused.code, Code.Unauthenticated, `${protocol.name}: ${refused.message}`);
      }
    } finally {
      close();
    }
  });

  it("bad scopes and addresses are a 400 naming the field, on every protocol", async () => {
    const { calls, close } = protocols();
    const cases: [CreateFields, RegExp][] = [
      [{ scopes: ["admin"] }, /^scopes\[0\]: /],
      [{ scopes: ["Read"] }, /^scopes\[0\]: /],
      [{ scopes: ["read", "read"] }, /^scopes: /],
      [{ scopes: ["withdraw"] }, /^scopes: "withdraw" needs allowedIps/],
      [{ allowedIps: ["10.0.0.1/8"] }, /^allowedIps\[0\]: must be an IPv4 or IPv6 address/],
      [{ allowedIps: ["203.0.113.7", "localhost"] }, /^allowedIps\[1\]: /],
      [{ allowedIps: Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`) }, /^allowedIps: /],
    ];
    try {
      for (const protocol of calls) {
        const user = await userOf(protocol.name);
        for (const [fields, message] of cases) {
          const req = await signedCreate(user, { ...fields, timestamp: BigInt(stamp++) });
          const outcome = await protocol.createToken(req);
          const label = `${protocol.name} ${JSON.stringify(fields)}`;
          assert.equal(outcome.code, Code.InvalidArgument, `${label}: ${outcome.message}`);
          assert.match(outcome.message, message, label);
        }
      }
    } finally {
      close();
    }
  });

  it("a token made without scopes has read and trade, and no allow-list", async () => {
    const user = await userOf("defaults");
    const { token } = await created(user, {});
    for (const [name, client] of Object.entries(introspectors())) {
      for (const round of [1, 2]) {
        const answer = await client.introspectToken({ token });
        assert.equal(answer.active, true, `${name} ${round}`);
        assert.deepEqual(answer.scopes, ["read", "trade"], `${name} ${round}`);
      }
    }
    for (const round of [1, 2]) {
      const answer = await forwardAuth(service.internalUrl, { authorization: bearer(token) });
      assert.equal(answer.status, 200, `${round}: ${answer.body}`);
      assert.equal(answer.headers.get("x-token-scopes"), "read,trade");
    }
  });

  it("IntrospectToken: a token with an allow-list is active only for a clientIp inside it", async () => {
    const user = await userOf("introspect");
    const { token } = await created(user, {
      scopes: ["trade"],
      allowedIps: ["203.0.113.0/24", "2001:db8::/32"],
    });
    for (const [name, client] of Object.entries(introspectors())) {
      for (const round of [1, 2]) {
        const label = `${name} ${round}`;
        for (const inside of ["203.0.113.9", "::ffff:203.0.113.9", "2001:db8:5::1"]) {
          const answer = await client.introspectToken({ token, clientIp: inside });
          assert.equal(answer.active, true, `${label} ${inside}`);
          assert.deepEqual(answer.scopes, ["trade"], label);
        }
        for (const outside of ["198.51.100.1", "", "203.0.113.9:443", "garbage"]) {
          const answer = await client.introspectToken(
            create(IntrospectTokenRequestSchema, { token, clientIp: outside }),
          );
          assert.equal(answer.active, false, `${label} ${JSON.stringify(outside)}`);
          assert.equal(answer.userId, "", label);
        }
      }
    }
  });

  it("/auth: the route's scopes, the client's address from X-Real-IP or the last of X-Forwarded-For", async () => {
    const user = await userOf("forward-auth");
    const { token } = await created(user, {
      scopes: ["read", "trade"],
      allowedIps: ["203.0.113.7"],
    });
    const ask = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${service.internalUrl}${path}`, {
        headers: { authorization: bearer(token), ...headers },
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, headers: res.headers, body: await res.text() };
    };
    const here = { "x-real-ip": "203.0.113.7" };
    for (const round of [1, 2]) {
      const ok = await ask("/auth?scope=trade", here);
      assert.equal(ok.status, 200, `${round}: ${ok.body}`);
      assert.equal(ok.headers.get("x-token-scopes"), "read,trade");
      const viaProxy = await ask("/auth", { "x-forwarded-for": "198.51.100.1, 203.0.113.7" });
      assert.equal(viaProxy.status, 200, viaProxy.body);
      const elsewheres: Record<string, string>[] = [
        { "x-real-ip": "203.0.113.8" },
        { "x-forwarded-for": "203.0.113.7, 198.51.100.1" },
        {},
      ];
      for (const elsewhere of elsewheres) {
        const refused = await ask("/auth", elsewhere);
        assert.equal(refused.status, 403, `${round} ${JSON.stringify(elsewhere)}: ${refused.body}`);
        assert.equal(refused.headers.get("x-user-id"), null);
        assert.match(refused.body, /not allowed from this address/);
      }
      const scoped = await ask("/auth?scope=trade&scope=withdraw", here);
      assert.equal(scoped.status, 403, scoped.body);
      assert.equal(
        scoped.headers.get("www-authenticate"),
        'Bearer realm="perps-tokens", error="insufficient_scope", scope="withdraw"',
      );
      const unknown = await ask("/auth?scope=admin", here);
      assert.equal(unknown.status, 400, unknown.body);
      assert.match(
        (JSON.parse(unknown.body) as { message: string }).message,
        /"admin" is not a scope/,
      );
    }
  });

  it("refusals of live tokens for their grants are counted by reason and method", async () => {
    const user = await userOf("counted");
    const { token } = await created(user, { scopes: ["read"], allowedIps: ["203.0.113.7"] });
    const count = async (reason: string, method: string) => {
      const text = await (await fetch(`${service.internalUrl}/metrics`)).text();
      return (
        samples(text).get(
          `perps_token_grant_refusals_total{reason="${reason}",method="${method}"}`,
        ) ?? 0
      );
    };
    const before = {
      scope: await count("insufficient_scope", "forward-auth"),
      address: await count("ip_not_allowed", "forward-auth"),
      introspect: await count("ip_not_allowed", "IntrospectToken"),
    };
    const auth = (path: string, ip: string) =>
      fetch(`${service.internalUrl}${path}`, {
        headers: { authorization: bearer(token), "x-real-ip": ip },
      });
    assert.equal((await auth("/auth?scope=trade", "203.0.113.7")).status, 403);
    assert.equal((await auth("/auth", "198.51.100.1")).status, 403);
    assert.equal((await auth("/auth", "203.0.113.7")).status, 200);
    const answer = await introspectors().gRPC.introspectToken({ token, clientIp: "198.51.100.1" });
    assert.equal(answer.active, false);
    assert.equal(await count("insufficient_scope", "forward-auth"), before.scope + 1);
    assert.equal(await count("ip_not_allowed", "forward-auth"), before.address + 1);
    assert.equal(await count("ip_not_allowed", "IntrospectToken"), before.introspect + 1);
  });

  it("ListTokens: each entry's scopes, allow-list, creation and exact expiry", async () => {
    const user = await userOf("list");
    const before = Date.now();
    const plain = await created(user, { name: "plain" });
    const bound = await created(user, {
      name: "bound",
      expiresIn: 60n,
      scopes: ["read"],
      allowedIps: ["2001:db8::/32"],
    });
    const res = await fetch(`${service.publicUrl}/user/tokens`, {
      headers: { authorization: bearer(plain.token) },
    });
    const body = (await res.json()) as { tokens: Record<string, unknown>[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    const byName = new Map(body.tokens.map((t) => [t.name, t]));
    const first = byName.get("bound");
    const second = byName.get("plain");
    assert.ok(first !== undefined && second !== undefined, JSON.stringify(body));
    assert.equal(first.id, bound.id);
    assert.deepEqual(first.scopes, ["read"]);
    assert.deepEqual(first.allowedIps, ["2001:db8::/32"]);
    assert.deepEqual(second.scopes, ["read", "trade"]);
    // As every default inside an answer's entries, an empty list is left out of the JSON.
    assert.equal(second.allowedIps, undefined);
    for (const entry of [first, second]) {
      const createdAt = Date.parse(String(entry.createdAt));
      assert.ok(createdAt >= before - 1000 && createdAt <= Date.now(), String(entry.createdAt));
      assert.match(String(entry.expiresAtTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(String(entry.expiresAtTime).slice(0, 10), entry.expiresAt);
    }
    const expiresAt = Date.parse(String(first.expiresAtTime));
    assert.ok(Math.abs(expiresAt - (before + 60_000)) < 5_000, String(first.expiresAtTime));
  });
});
