import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  IntrospectTokenRequestSchema,
  TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import {
  attributeValue,
  type ExportRequest,
  hexId,
  type OtlpSpan,
  spansOf,
  startOtlpTraceReceiver,
} from "../../scripts/otlp-trace-receiver.js";
import { createFirstToken } from "../support/first-token.js";
import { createGrpcClient } from "../support/grpc-client.js";
import { killMainProcesses, type MainProcess, startMainProcess } from "../support/main-process.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";

const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP receiver: every export request it gets, decoded with the official protos. */
async function startReceiver(): Promise<{
  server: Server;
  url: string;
  requests: ExportRequest[];
  /** The Authorization header of each export request. */
  authorizations: (string | undefined)[];
}> {
  const requests: ExportRequest[] = [];
  const authorizations: (string | undefined)[] = [];
  const { server, url } = await startOtlpTraceReceiver({
    onExport: ({ path, headers, request }) => {
      authorizations.push(headers.authorization);
      assert.equal(path, "/v1/traces");
      assert.equal(headers["content-type"], "application/x-protobuf");
      requests.push(request);
    },
  });
  return { server, url, requests, authorizations };
}

/** protobufjs' `bytes: String` is base64: the span ids as W3C writes them, in hex. */
const hex = hexId;

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  return attributeValue(span.attributes.find((a) => a.key === key)?.value);
}

describe("OpenTelemetry traces (OTLP/HTTP protobuf to a real receiver)", () => {
  let redis: TestRedis;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let service: MainProcess;
  let urls: { publicUrl: string; internalUrl: string; internalAddress: string };
  // The collector's credentials, in its URL (issue 34, item 7: they were logged).
  const password = `s3cret-${randomBytes(6).toString("hex")}`;

  before(async () => {
    redis = await startTestRedisServer();
    receiver = await startReceiver();
    service = startMainProcess({
      REDIS_URL: redis.url,
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      WORKERS: "1",
      // Every check reads Redis, so each has its lookup span: with the token
      // cache a repeated check is answered from memory, with no Redis span.
      TOKEN_CACHE: "off",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace("//", `//collector:${password}@`),
      OTEL_SERVICE_NAME: "tokens-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    const [match] = await service.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    urls = {
      publicUrl: `http://127.0.0.1:${match?.[1]}`,
      internalUrl: `http://127.0.0.1:${match?.[2]}`,
      internalAddress: `127.0.0.1:${match?.[2]}`,
    };
  });
  after(async () => {
    killMainProcesses();
    receiver.server.close();
    await redis.dispose();
  });

  /** The spans received so far, waiting until `ready` holds. */
  async function spansWhen(ready: (spans: OtlpSpan[]) => boolean): Promise<OtlpSpan[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const spans = receiver.requests.flatMap(spansOf);
      if (ready(spans)) {
        return spans;
      }
      assert.ok(Date.now() < deadline, `spans so far: ${JSON.stringify(spans.map((s) => s.name))}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  it("the collector's credentials reach the collector, never the log", async () => {
    await (await fetch(`${urls.internalUrl}/healthz`)).arrayBuffer();
    await spansWhen((spans) => spans.length > 0);
    const basic = `Basic ${Buffer.from(`collector:${password}`).toString("base64")}`;
    assert.ok(
      receiver.authorizations.every((a) => a === basic),
      "exports carry the credentials",
    );
    const port = new URL(receiver.url).port;
    assert.match(
      service.output(),
      new RegExp(`"traces":"http://\\[redacted\\]@127\\.0\\.0\\.1:${port}/v1/traces"`),
    );
    assert.ok(!service.output().includes(password), "the collector's password reached the log");
  });

  // Issue 34, item 9: a public caller's tracestate (a token, here) was exported with every span,
  // and its sampled flag overrode the parent-based sampler. The public listener now starts its
  // own trace, linked to the caller's; the internal listener's callers (services) are continued.
  it("a public call starts its own trace linked to the caller's; IntrospectToken continues its caller's", async () => {
    const first = await createFirstToken(urls, "traced");
    assert.equal(first.createStatus, 201);
    const token = first.body.token ?? "";
    const callerTrace = randomBytes(16).toString("hex");
    const restParent = randomBytes(8).toString("hex");
    const grpcParent = randomBytes(8).toString("hex");

    // A REST create whose caller says "not sampled" and puts a token in tracestate.
    const second = await fetch(`${urls.publicUrl}/user/tokens`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        traceparent: `00-${callerTrace}-${restParent}-00`,
        tracestate: `leak=${token}`,
      },
      body: "{}",
    });
    await second.arrayBuffer();
    const client = createGrpcClient(TokenIntrospectionService, urls.internalAddress);
    try {
      const metadata = new grpc.Metadata();
      metadata.set("traceparent", `00-${callerTrace}-${grpcParent}-01`);
      metadata.set("tracestate", "vendor=service-a");
      const answer = await client.introspectToken({ token }, metadata);
      assert.equal(answer.active, true);
    } finally {
      client.close();
    }

    const linkedTo = (span: OtlpSpan, parent: string) =>
      span.links?.some((l) => hex(l.traceId) === callerTrace && hex(l.spanId) === parent) === true;
    const ofCaller = (spans: OtlpSpan[]) => spans.filter((s) => hex(s.traceId) === callerTrace);
    // The REST create is refused before any Redis call: its span alone; IntrospectToken and its lookup.
    const spans = await spansWhen(
      (all) => ofCaller(all).length >= 2 && all.some((s) => linkedTo(s, restParent)),
    );
    const traced = ofCaller(spans);
    const rest = spans.find((s) => linkedTo(s, restParent));
    const introspect = traced.find((s) => hex(s.parentSpanId) === grpcParent);
    assert.ok(rest !== undefined && introspect !== undefined, JSON.stringify(spans));
    // Sampled by the service's own sampler despite "-00"; a root of a trace of its own.
    assert.notEqual(hex(rest.traceId), callerTrace);
    assert.equal(hex(rest.parentSpanId), "");
    assert.equal(rest.traceState ?? "", "");
    assert.equal(rest.links?.[0]?.traceState ?? "", "", "the link carries no tracestate");
    assert.equal(rest.kind, SERVER);
    assert.equal(rest.name, "perps.token.v1.TokenService/CreateToken");
    assert.equal(attribute(rest, "http.request.method"), "POST");
    assert.equal(attribute(rest, "http.response.status_code"), 400);
    assert.equal(introspect.traceState, "vendor=service-a", "a service's trace state is continued");
    assert.equal(introspect.kind, SERVER);
    assert.equal(introspect.name, "perps.token.v1.TokenIntrospectionService/IntrospectToken");
    assert.equal(attribute(introspect, "rpc.system"), "grpc");
    assert.equal(attribute(introspect, "rpc.grpc.status_code"), 0);
    assert.equal(attribute(introspect, "network.protocol.version"), "2");
    const lookup = traced.find((s) => hex(s.parentSpanId) === hex(introspect.spanId));
    assert.ok(lookup !== undefined, "the token lookup is a child of IntrospectToken");
    assert.equal(lookup.kind, CLIENT);
    assert.equal(attribute(lookup, "db.system.name"), "redis");
    assert.equal(lookup.name, "token.lookup");

    // The resource says which service; no attribute holds the token or a signature.
    const resource = receiver.requests[0]?.resourceSpans[0]?.resource.attributes ?? [];
    assert.ok(
      resource.some((a) => a.key === "service.name" && a.value.stringValue === "tokens-under-test"),
    );
    const everything = JSON.stringify(receiver.requests);
    assert.ok(!everything.includes(token), "the export holds the token");
    assert.ok(!everything.includes(token.slice(3, 40)));
    // A check writes no line of its own, traced or not (docs/design-choices.md): its span says it all.
    assert.doesNotMatch(
      service.output(),
      /"method":"perps.token.v1.TokenIntrospectionService\/IntrospectToken"[^\n]*"msg":"request"/,
    );
  });

  it("Connect, gRPC-Web and /auth continue the caller's trace too, each with its token lookup", async () => {
    const first = await createFirstToken(urls, "traced elsewhere");
    const token = first.body.token ?? "";
    const callerTrace = randomBytes(16).toString("hex");
    const parents = {
      connect: randomBytes(8).toString("hex"),
      grpcWeb: randomBytes(8).toString("hex"),
      auth: randomBytes(8).toString("hex"),
    };
    const traceparent = (parent: string) => `00-${callerTrace}-${parent}-01`;
    const path = `${urls.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`;
    const connect = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: traceparent(parents.connect) },
      body: JSON.stringify({ token }),
    });
    assert.equal(((await connect.json()) as { active?: boolean }).active, true);
    const message = toBinary(
      IntrospectTokenRequestSchema,
      create(IntrospectTokenRequestSchema, { token }),
    );
    const envelope = Buffer.alloc(5 + message.length);
    envelope.writeUInt32BE(message.length, 1);
    envelope.set(message, 5);
    const grpcWeb = await fetch(path, {
      method: "POST",
      headers: {
        "content-type": "application/grpc-web+proto",
        traceparent: traceparent(parents.grpcWeb),
      },
      body: envelope,
    });
    assert.equal(grpcWeb.status, 200);
    await grpcWeb.arrayBuffer();
    const auth = await fetch(`${urls.internalUrl}/auth`, {
      headers: { authorization: `Bearer ${token}`, traceparent: traceparent(parents.auth) },
    });
    assert.equal(auth.status, 200);

    const ofCaller = (spans: OtlpSpan[]) => spans.filter((s) => hex(s.traceId) === callerTrace);
    const spans = ofCaller(await spansWhen((all) => ofCaller(all).length >= 6));
    const expected = [
      [parents.connect, "perps.token.v1.TokenIntrospectionService/IntrospectToken", "connect_rpc"],
      [parents.grpcWeb, "perps.token.v1.TokenIntrospectionService/IntrospectToken", "grpc"],
      [parents.auth, "GET /auth", undefined],
    ] as const;
    for (const [parent, name, system] of expected) {
      const server = spans.find((s) => hex(s.parentSpanId) === parent);
      assert.ok(server !== undefined, `no span under ${name}'s caller: ${JSON.stringify(spans)}`);
      assert.equal(server.kind, SERVER);
      assert.equal(server.name, name);
      assert.equal(attribute(server, "rpc.system"), system);
      const child = spans.find((s) => hex(s.parentSpanId) === hex(server.spanId));
      assert.equal(child?.name, "token.lookup", `${name}: its Redis lookup is its child`);
    }
  });

  it("a create's own Redis call is a child of its server span (one REST create with a real signature)", async () => {
    const spans = await spansWhen((all) =>
      all.some(
        (s) =>
          s.name === "perps.token.v1.TokenService/CreateToken" &&
          attribute(s, "http.response.status_code") === 201,
      ),
    );
    const created = spans.find(
      (s) =>
        s.name === "perps.token.v1.TokenService/CreateToken" &&
        attribute(s, "http.response.status_code") === 201,
    );
    assert.ok(created !== undefined);
    const children = spans.filter((s) => hex(s.parentSpanId) === hex(created.spanId));
    assert.ok(
      children.some((s) => s.name === "token.create" && s.kind === CLIENT),
      JSON.stringify(children.map((c) => c.name)),
    );
  });
});
