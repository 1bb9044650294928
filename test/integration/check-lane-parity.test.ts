import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { connect, type IncomingHttpHeaders } from "node:http2";
import { after, before, describe, it } from "node:test";
import { generateToken } from "@perps/token-client/protocol";
import { credentialLookup, parseCredentialsFile } from "../../src/admin-auth/credentials-file.js";
import { createToken, deleteToken, register } from "../support/forward-auth-calls.js";
import { rawExchange } from "../support/raw-exchange.js";
import { newUser } from "../support/signing.js";
import { credentialsText } from "../support/test-operator.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 41: the check lane's answers are the pipeline's, byte for byte, for
// every kind of input, on each protocol it serves (IntrospectToken over a raw
// HTTP/2 stream, GET /auth over HTTP/1.1). Two services on one Redis, one
// with the lane and one without; the only differences allowed are the request
// id the caller did not send (a refusal's, made by each service) and the log line.

const INTROSPECT = "/perps.token.v1.TokenIntrospectionService/IntrospectToken";
const EDGE = { name: "edge-proxy", secret: "svc_secret-of-the-edge-proxy" };

/** A gRPC answer as the client sees it, but for what may differ: the date and the id we did not send. */
interface GrpcAnswer {
  headers: Record<string, unknown>;
  body: string;
  trailers: Record<string, unknown>;
}

function comparable(headers: IncomingHttpHeaders, keepId: boolean): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name !== "date" && (keepId || name !== "x-request-id")) {
      kept[name] = value;
    }
  }
  return kept;
}

function introspect(
  baseUrl: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<GrpcAnswer & { requestId: unknown }> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": INTROSPECT,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let head: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      head = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      const keepId = headers["x-request-id"] !== undefined;
      resolve({
        headers: comparable(head, keepId),
        body: Buffer.concat(chunks).toString("hex"),
        trailers: comparable(trailers, keepId),
        requestId: head["x-request-id"] ?? trailers["x-request-id"],
      });
    });
    stream.end(body);
  });
}

/** An IntrospectTokenRequest of `token` (and `clientIp`, if given) in its envelope. */
function envelope(token: string | Buffer, clientIp?: string): Buffer {
  const bytes = Buffer.isBuffer(token) ? token : Buffer.from(token);
  const ip = Buffer.from(clientIp ?? "");
  const message = Buffer.concat([
    Buffer.of(0x0a),
    varint(bytes.length),
    bytes,
    ...(clientIp === undefined ? [] : [Buffer.of(0x12), varint(ip.length), ip]),
  ]);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let rest = n;
  while (rest > 0x7f) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return Buffer.from(out);
}

/** `GET /auth` over HTTP/1.1, the raw answer but for its date and the id we did not send. */
async function auth(
  baseUrl: string,
  headers: Record<string, string>,
  path = "/auth",
): Promise<string> {
  const { host } = new URL(baseUrl);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const text = await rawExchange(
    baseUrl,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${lines.join("")}Connection: close\r\n\r\n`,
  );
  const keepId = headers["x-request-id"] !== undefined;
  return text
    .split("\r\n")
    .filter((line) => !/^date:/i.test(line) && (keepId || !/^x-request-id:/i.test(line)))
    .join("\r\n");
}

describe("the check lane answers as the pipeline does", () => {
  let redis: TestRedis;
  let lane: TestService;
  let pipeline: TestService;
  let credentialed: TestService;
  let credentialedPipeline: TestService;

  before(async () => {
    redis = await startTestRedis();
    const serviceOf = credentialLookup(
      parseCredentialsFile(credentialsText([EDGE]), "t", "SERVICE_CREDENTIALS_FILE"),
    );
    [lane, pipeline, credentialed, credentialedPipeline] = await Promise.all([
      startTestService({ redis: redis.topology }),
      startTestService({ redis: redis.topology, checkLane: false }),
      startTestService({ redis: redis.topology, serviceOf }),
      startTestService({ redis: redis.topology, serviceOf, checkLane: false }),
    ]);
  });
  after(async () => {
    await Promise.all([lane, pipeline, credentialed, credentialedPipeline].map((s) => s?.stop()));
    await redis?.dispose();
  });

  /** The answers of both, the lane's asked twice so that its second is a cache hit where there is one. */
  async function both<T>(ask: (service: TestService) => Promise<T>): Promise<[T, T]> {
    await ask(lane);
    return [await ask(lane), await ask(pipeline)];
  }

  async function liveToken(
    expiresIn?: bigint,
    grants: { scopes?: string[]; allowedIps?: string[] } = {},
  ) {
    const user = await newUser();
    await register(lane, user);
    return {
      user,
      ...(await createToken(lane.publicUrl, user, {
        ...grants,
        ...(expiresIn === undefined ? {} : { expiresIn }),
      })),
    };
  }

  it("scopes and an allow-list: inside and outside it, a route's scopes met and not", async () => {
    const { token } = await liveToken(undefined, {
      scopes: ["read", "transfer"],
      allowedIps: ["203.0.113.0/24", "2001:db8::/32"],
    });
    for (const clientIp of [undefined, "", "203.0.113.5", "2001:db8::1", "198.51.100.1", "junk"]) {
      const [fromLane, fromPipeline] = await both((s) =>
        introspect(s.internalUrl, envelope(token, clientIp)),
      );
      assert.deepEqual(fromLane, fromPipeline, String(clientIp));
    }
    const bearer = { authorization: `Bearer ${token}` };
    for (const [path, address] of [
      ["/auth", { "x-real-ip": "203.0.113.5" }],
      ["/auth?scope=transfer", { "x-forwarded-for": "10.0.0.1, 2001:db8::7" }],
      ["/auth?scope=trade", { "x-real-ip": "203.0.113.5" }],
      ["/auth?scope=nope", { "x-real-ip": "203.0.113.5" }],
      ["/auth", { "x-real-ip": "198.51.100.1" }],
      ["/auth", {}],
    ] as const) {
      const [fromLane, fromPipeline] = await both((s) =>
        auth(s.internalUrl, { ...bearer, ...address }, path),
      );
      assert.equal(fromLane, fromPipeline, `${path} ${JSON.stringify(address)}`);
    }
  });

  it("a live token, with and without the caller's request id", async () => {
    const { token } = await liveToken();
    const [fromLane, fromPipeline] = await both((s) => introspect(s.internalUrl, envelope(token)));
    assert.deepEqual(
      { ...fromLane, requestId: undefined },
      { ...fromPipeline, requestId: undefined },
    );
    assert.match(fromLane.body, /^00/, "an answer with a message");
    assert.equal(fromLane.requestId, undefined, "the lane makes no request id");
    assert.equal(fromPipeline.requestId, undefined, "nor does the pipeline, for a check");
    const withId = { "x-request-id": "caller-id-1" };
    assert.deepEqual(...(await both((s) => introspect(s.internalUrl, envelope(token), withId))));
    const [laneAuth, pipelineAuth] = await both((s) =>
      auth(s.internalUrl, { authorization: `Bearer ${token}` }),
    );
    assert.equal(laneAuth, pipelineAuth);
    assert.match(laneAuth, /^HTTP\/1\.1 200 /);
    const withIds = await both((s) =>
      auth(s.internalUrl, { authorization: `Bearer ${token}`, "x-request-id": "caller-id-2" }),
    );
    assert.equal(withIds[0], withIds[1]);
    assert.match(withIds[0], /\r\nx-request-id: caller-id-2\r\n/);
  });

  it("an expired, a deleted, a malformed and an unknown token", async () => {
    const expiring = await liveToken(1n);
    const deleted = await liveToken();
    // Cached by a check first: the lane must not answer from what it held.
    await introspect(lane.internalUrl, envelope(expiring.token));
    await auth(lane.internalUrl, { authorization: `Bearer ${deleted.token}` });
    await introspect(lane.internalUrl, envelope(deleted.token));
    await deleteToken(lane.publicUrl, deleted.user, deleted.id);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const unknown = generateToken(randomUUID(), randomBytes(12).toString("base64url"));
    const tampered = `${deleted.token.slice(0, 60)}${deleted.token[60] === "A" ? "B" : "A"}${deleted.token.slice(61)}`;
    for (const token of [
      expiring.token,
      deleted.token,
      unknown,
      tampered,
      "pt_bad",
      "",
      "x".repeat(89),
      `pt_${"é".repeat(86)}`,
    ]) {
      const [fromLane, fromPipeline] = await both((s) =>
        introspect(s.internalUrl, envelope(token)),
      );
      assert.deepEqual(
        { ...fromLane, requestId: undefined },
        { ...fromPipeline, requestId: undefined },
        token,
      );
      assert.equal(fromLane.body, "0000000000", `${token}: active false and nothing more`);
      const [laneAuth, pipelineAuth] = await both((s) =>
        auth(s.internalUrl, { authorization: `Bearer ${token}` }),
      );
      assert.equal(laneAuth, pipelineAuth, token);
      assert.match(laneAuth, /^HTTP\/1\.1 401 /, token);
    }
  });

  it("an undecodable message, an oversized one, a wrong content type, a passed deadline", async () => {
    const { token } = await liveToken();
    const oversized = Buffer.alloc(5);
    oversized.writeUInt32BE(70_000, 1);
    const cases: [string, Buffer, Record<string, string>][] = [
      ["undecodable", Buffer.concat([envelope(token).subarray(0, 5), Buffer.of(0xff, 0xff)]), {}],
      ["oversized (announced)", Buffer.concat([oversized, Buffer.alloc(1000)]), {}],
      ["oversized (sent)", envelope(Buffer.alloc(70_000, 0x61)), {}],
      ["wrong content type", envelope(token), { "content-type": "application/json" }],
      ["deadline passed", envelope(token), { "grpc-timeout": "1n" }],
      ["compressed", envelope(token), { "grpc-encoding": "gzip" }],
    ];
    for (const [kind, body, headers] of cases) {
      const [fromLane, fromPipeline] = await both((s) => introspect(s.internalUrl, body, headers));
      assert.deepEqual(
        { ...fromLane, requestId: undefined },
        { ...fromPipeline, requestId: undefined },
        kind,
      );
      if (kind !== "compressed") {
        // (An uncompressed envelope under grpc-encoding is a valid call: answered.)
        assert.notEqual(fromLane.trailers["grpc-status"], "0", kind);
      }
    }
    const [laneAuth, pipelineAuth] = await both((s) =>
      auth(s.internalUrl, { authorization: `Bearer ${token}${"x".repeat(20_000)}` }),
    );
    assert.equal(laneAuth, pipelineAuth, "an oversized header");
  });

  it("a missing service credential, with SERVICE_CREDENTIALS_FILE", async () => {
    const user = await newUser();
    await register(credentialed, user);
    const { token } = await createToken(credentialed.publicUrl, user);
    const pair = (ask: (s: TestService) => Promise<unknown>) =>
      Promise.all([ask(credentialed), ask(credentialed)]).then(async ([, a]) => [
        a,
        await ask(credentialedPipeline),
      ]);
    const refused: Record<string, string>[] = [{}, { "x-service-credential": "wrong" }];
    for (const headers of refused) {
      const [fromLane, fromPipeline] = (await pair((s) =>
        introspect(s.internalUrl, envelope(token), headers),
      )) as [GrpcAnswer, GrpcAnswer];
      assert.deepEqual(
        { ...fromLane, requestId: undefined },
        { ...fromPipeline, requestId: undefined },
      );
      const [laneAuth, pipelineAuth] = (await pair((s) =>
        auth(s.internalUrl, { authorization: `Bearer ${token}`, ...headers }),
      )) as [string, string];
      assert.equal(laneAuth, pipelineAuth);
      assert.match(laneAuth, /^HTTP\/1\.1 403 /);
    }
    const granted = { "x-service-credential": EDGE.secret };
    const [fromLane, fromPipeline] = (await pair((s) =>
      introspect(s.internalUrl, envelope(token), granted),
    )) as [GrpcAnswer, GrpcAnswer];
    assert.deepEqual(
      { ...fromLane, requestId: undefined },
      { ...fromPipeline, requestId: undefined },
    );
    assert.match(fromLane.body, /^00/);
  });
});
