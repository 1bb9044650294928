import assert from "node:assert/strict";
import { once } from "node:events";
import { type ClientHttp2Session, connect, type IncomingHttpHeaders } from "node:http2";
import { after, before, describe, it } from "node:test";
import { trailerParse } from "@connectrpc/connect/protocol-grpc-web";
import { envelopePrefix, type HeldAnswer, holdStream, within } from "../support/held-stream.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 34, item 3: every read has its limit enforced while reading. A gRPC
// message whose prefix announces more than the method's limit is refused
// once the prefix is read, and the stream is reset (NO_ERROR) after the
// answer, so a client sending megabytes makes the service hold none of them.
// Item 10: a deadline passed while the body arrives is DEADLINE_EXCEEDED,
// and refusals carry x-request-id in their trailers.

const INTROSPECT = "/perps.token.v1.TokenIntrospectionService/IntrospectToken";
/** IntrospectToken's read limit (src/server/api-services.ts; docs/security.md). */
const READ_MAX_BYTES = 64 * 1024;
const TWO_MIB = 2 * 1024 * 1024;
// Every answer below is due as soon as the service has read what it needs;
// a generous bound for a loaded machine, far below the request timeout.
const PROMPT_MS = 10_000;
// A graceful close takes one round trip once no stream is open; a stream left
// open on the service's side holds it for good.
const CLOSE_MS = 5_000;

/** Closes `session` gracefully (GOAWAY, then its streams' end); resolves once it has closed. */
function closed(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => session.close(resolve));
}

/** IntrospectToken's request message for `token`, in an envelope. */
function introspectMessage(token: string): Buffer {
  const bytes = Buffer.from(token);
  const message = Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes]);
  return Buffer.concat([envelopePrefix(message.length), message]);
}

/** The gRPC status of an answer, from its trailers or, for gRPC-Web, its trailer frame. */
function statusOf(answer: HeldAnswer): { code: string; requestId: unknown } {
  if (String(answer.headers["content-type"]).startsWith("application/grpc-web")) {
    // The trailer frame (flag 0x80) follows the message's envelope, if any.
    let at = 0;
    while (at + 5 <= answer.body.length && answer.body[at] !== 0x80) {
      at += 5 + answer.body.readUInt32BE(at + 1);
    }
    const trailer = trailerParse(answer.body.subarray(at + 5));
    return { code: trailer.get("grpc-status") ?? "", requestId: trailer.get("x-request-id") };
  }
  return {
    code: String(answer.trailers["grpc-status"] ?? answer.headers["grpc-status"]),
    requestId: answer.trailers["x-request-id"],
  };
}

describe("read limits enforced while reading (issue 34)", () => {
  let redis: TestRedis;
  let service: TestService;
  let session: ClientHttp2Session;

  before(async () => {
    redis = await startTestRedis();
    // A request timeout far longer than any wait here: no answer below is the timeout's.
    service = await startTestService({ redis: redis.topology, requestTimeoutMs: 120_000 });
  });
  after(async () => {
    session?.destroy();
    await service?.stop();
    await redis?.dispose();
  });

  /** A valid call on `session` answers: the connection is still usable. */
  async function stillServes(on: ClientHttp2Session): Promise<void> {
    const held = holdStream(on, INTROSPECT, { "content-type": "application/grpc" });
    held.stream.end(introspectMessage("pt_unknown"));
    const answer = await within(held.closed, PROMPT_MS, "a valid call after the refusals");
    assert.equal(statusOf(answer).code, "0");
  }

  for (const [protocol, contentType] of [
    ["gRPC (the raw stream path)", "application/grpc"],
    ["gRPC-Web (Connect's path)", "application/grpc-web+proto"],
  ] as const) {
    it(`${protocol}: 100 streams announcing 2 MiB are refused after the prefix alone`, async () => {
      session = connect(service.internalUrl);
      const held = Array.from({ length: 100 }, () => {
        const one = holdStream(session, INTROSPECT, { "content-type": contentType });
        // Only the prefix: a service that waits for the message never answers.
        one.stream.write(envelopePrefix(TWO_MIB));
        return one;
      });
      const answers = await within(
        Promise.all(held.map((h) => h.closed)),
        PROMPT_MS,
        "RESOURCE_EXHAUSTED after the 5-byte prefix",
      );
      for (const answer of answers) {
        const { code, requestId } = statusOf(answer);
        assert.equal(code, "8", "RESOURCE_EXHAUSTED");
        assert.equal(answer.rstCode, 0, "reset with NO_ERROR after the whole answer");
        assert.equal(requestId, answer.headers["x-request-id"], "the request id in the trailers");
        assert.equal(typeof requestId, "string");
      }
      await stillServes(session);
      session.destroy();
    });
  }

  it("100 streams each sending 2 MiB without END_STREAM: all refused, the connection usable", async () => {
    session = connect(service.internalUrl);
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const held = Array.from({ length: 100 }, () => {
      const one = holdStream(session, INTROSPECT, { "content-type": "application/grpc" });
      one.stream.write(envelopePrefix(TWO_MIB));
      // 2 MiB as fast as the stream takes them (flow control), never ending it.
      let sent = 0;
      const more = () => {
        while (sent < TWO_MIB && !one.stream.closed) {
          sent += chunk.length;
          if (!one.stream.write(chunk)) {
            one.stream.once("drain", more);
            return;
          }
        }
      };
      more();
      return one;
    });
    const answers = await within(
      Promise.all(held.map((h) => h.closed)),
      PROMPT_MS,
      "every stream answered",
    );
    for (const answer of answers) {
      assert.equal(statusOf(answer).code, "8");
      assert.equal(answer.rstCode, 0);
    }
    await stillServes(session);
    session.destroy();
  });

  it("Connect and REST: refused as soon as the counted bytes pass the limit, then reset", async () => {
    session = connect(service.internalUrl);
    const connectCall = holdStream(session, INTROSPECT, { "content-type": "application/json" });
    connectCall.stream.write(Buffer.alloc(READ_MAX_BYTES + 1, 0x20));
    const connectAnswer = await within(connectCall.closed, PROMPT_MS, "Connect's refusal");
    assert.equal(connectAnswer.headers[":status"], 429);
    assert.equal(
      (JSON.parse(connectAnswer.body.toString()) as { code: string }).code,
      "resource_exhausted",
    );
    assert.equal(connectAnswer.rstCode, 0);
    session.destroy();

    session = connect(service.publicUrl);
    const restCall = holdStream(session, "/user/tokens", { "content-type": "application/json" });
    restCall.stream.write(Buffer.alloc(READ_MAX_BYTES + 1, 0x20));
    const restAnswer = await within(restCall.closed, PROMPT_MS, "REST's 413");
    assert.equal(restAnswer.headers[":status"], 413);
    assert.equal(restAnswer.rstCode, 0);
    session.destroy();
  });

  // Issue 40: a refused message the client sent whole (END_STREAM after
  // 100 KiB, more than the 64 KiB stream window) leaves nothing open: the
  // stream paused at the limit is let flow away after its reset, so the
  // client's graceful close (GOAWAY, then waiting for the service to close
  // the connection) completes, after a later call on the same connection.
  const HUNDRED_KIB = 100 * 1024;
  const refusedWhole: {
    protocol: string;
    headers: Record<string, string>;
    body: Buffer;
    refused: (answer: HeldAnswer) => boolean;
  }[] = [
    {
      protocol: "gRPC (the raw stream path)",
      headers: { "content-type": "application/grpc" },
      body: Buffer.concat([envelopePrefix(HUNDRED_KIB), Buffer.alloc(HUNDRED_KIB, 0x61)]),
      refused: (a) => statusOf(a).code === "8",
    },
    {
      protocol: "gRPC, compressed (Connect's gRPC path)",
      headers: { "content-type": "application/grpc", "grpc-encoding": "gzip" },
      body: Buffer.concat([
        Buffer.from([1]),
        envelopePrefix(HUNDRED_KIB).subarray(1),
        Buffer.alloc(HUNDRED_KIB, 0x61),
      ]),
      refused: (a) => statusOf(a).code === "8",
    },
    {
      protocol: "gRPC-Web",
      headers: { "content-type": "application/grpc-web+proto" },
      body: Buffer.concat([envelopePrefix(HUNDRED_KIB), Buffer.alloc(HUNDRED_KIB, 0x61)]),
      refused: (a) => statusOf(a).code === "8",
    },
    {
      protocol: "Connect",
      headers: { "content-type": "application/json" },
      body: Buffer.alloc(HUNDRED_KIB, 0x20),
      refused: (a) => Number(a.headers[":status"]) === 429,
    },
  ];
  for (const call of refusedWhole) {
    it(`${call.protocol}: after a refused 100 KiB message the client's session.close() completes`, async () => {
      session = connect(service.internalUrl);
      const held = holdStream(session, INTROSPECT, call.headers);
      held.stream.end(call.body);
      const answer = await within(held.closed, PROMPT_MS, "the refusal");
      assert.ok(call.refused(answer), JSON.stringify(answer.headers));
      await stillServes(session);
      await within(closed(session), CLOSE_MS, "session.close()");
    });
  }

  it("REST: after a refused 100 KiB body the client's session.close() completes", async () => {
    session = connect(service.publicUrl);
    const held = holdStream(session, "/user/tokens", { "content-type": "application/json" });
    held.stream.end(Buffer.alloc(HUNDRED_KIB, 0x20));
    const answer = await within(held.closed, PROMPT_MS, "REST's 413");
    assert.equal(answer.headers[":status"], 413);
    const health = session.request({ ":path": "/healthz" });
    health.resume();
    const [headers] = (await within(once(health, "response"), PROMPT_MS, "/healthz")) as [
      IncomingHttpHeaders,
    ];
    assert.equal(headers[":status"], 200);
    await within(closed(session), CLOSE_MS, "session.close()");
  });

  for (const [path, contentType] of [
    ["the raw stream path", "application/grpc"],
    ["Connect's gRPC path", "application/grpc-web+proto"],
  ] as const) {
    it(`a grpc-timeout passed while the body arrives is DEADLINE_EXCEEDED (${path})`, async () => {
      session = connect(service.internalUrl);
      const message = introspectMessage("pt_unknown");
      const held = holdStream(session, INTROSPECT, {
        "content-type": contentType,
        "grpc-timeout": "300m",
      });
      held.stream.write(message.subarray(0, 7));
      await new Promise((resolve) => setTimeout(resolve, 600));
      // The rest, after the deadline: no call is made of it.
      held.stream.end(message.subarray(7));
      const answer = await within(held.closed, PROMPT_MS, "the deadline's answer");
      const { code, requestId } = statusOf(answer);
      assert.equal(code, "4", "DEADLINE_EXCEEDED, never OK");
      assert.equal(requestId, answer.headers["x-request-id"]);
      await stillServes(session);
      session.destroy();
    });
  }

  it("a grpc-timeout beyond any timer (99999999H) is no deadline passed: the call is answered", async () => {
    session = connect(service.internalUrl);
    for (const contentType of ["application/grpc", "application/grpc-web+proto"]) {
      const held = holdStream(session, INTROSPECT, {
        "content-type": contentType,
        "grpc-timeout": "99999999H",
      });
      held.stream.write(introspectMessage("pt_unknown").subarray(0, 7));
      await new Promise((resolve) => setTimeout(resolve, 100));
      held.stream.end(introspectMessage("pt_unknown").subarray(7));
      const answer = await within(held.closed, PROMPT_MS, contentType);
      assert.equal(statusOf(answer).code, "0", contentType);
    }
    session.destroy();
  });

  it("an operator-only call without the operator's credential is refused before any body byte", async () => {
    session = connect(service.internalUrl);
    for (const contentType of ["application/grpc", "application/grpc-web+proto"]) {
      // Headers only: a service that reads the body first never answers.
      const held = holdStream(session, "/perps.token.v1.UserKeyService/PutUserKey", {
        "content-type": contentType,
      });
      const answer = await within(held.closed, PROMPT_MS, `${contentType}: the refusal`);
      assert.equal(statusOf(answer).code, "16", "UNAUTHENTICATED");
      assert.equal(answer.rstCode, 0);
    }
    const connectCall = holdStream(session, "/perps.token.v1.UserKeyService/PutUserKey", {
      "content-type": "application/json",
    });
    const connectAnswer = await within(connectCall.closed, PROMPT_MS, "Connect: the refusal");
    assert.equal(connectAnswer.headers[":status"], 401);
    session.destroy();
  });

  it("a refusal before the call (an unreadable grpc-timeout) carries x-request-id in its trailers", async () => {
    session = connect(service.internalUrl);
    for (const contentType of ["application/grpc", "application/grpc-web+proto"]) {
      const held = holdStream(session, INTROSPECT, {
        "content-type": contentType,
        "grpc-timeout": "1 second",
        "x-request-id": "refused-with-its-id",
      });
      held.stream.end(introspectMessage("pt_unknown"));
      const answer = await within(held.closed, PROMPT_MS, contentType);
      assert.deepEqual(statusOf(answer), { code: "3", requestId: "refused-with-its-id" });
    }
    session.destroy();
  });
});
