import assert from "node:assert/strict";
import { createServer as createHttp1Server } from "node:http";
import { connect, createServer as createHttp2Server, constants as h2 } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, fromJsonString, isMessage } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  createServiceImplSpec,
} from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { operatorKey } from "../../../../src/admin-auth/call-gate.js";
import { createUnaryInvoker } from "../../../../src/call/unary-invoker.js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../../../src/gen/health/v1/health_pb.js";
import type { NodeHandler } from "../../../../src/http/node-handler.js";
import {
  createUnaryCalls,
  deadlineAfter,
  deadlinePassed,
  serializedAnswer,
  whenDeadlinePasses,
} from "../../../../src/server/wire/unary-method.js";
import { send } from "../../../support/wire-exchange.js";

/** How many timers are pending now. */
function pendingTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
}

describe("a call's deadline", () => {
  it("is a time from now, or none", () => {
    assert.equal(deadlineAfter(undefined), null);
    const before = Date.now();
    const deadline = deadlineAfter(5000);
    const after = Date.now();
    assert.ok(deadline !== null && deadline >= before + 5000 && deadline <= after + 5000);
  });

  it("once passed, refuses the call DEADLINE_EXCEEDED, as grpc-go does", () => {
    const refusal = deadlinePassed();
    assert.equal(refusal.code, Code.DeadlineExceeded);
    assert.equal(refusal.rawMessage, "the operation timed out");
  });
});

describe("waiting for a deadline", () => {
  const never = () => assert.fail("no deadline should pass here");
  const open = { once: () => undefined };

  it("runs `passed` at the deadline", async () => {
    await new Promise<void>((resolve) => {
      whenDeadlinePasses(Date.now() + 20, open, resolve);
    });
  });

  it("sets no timer without a deadline, nor for one farther than a timer reaches", () => {
    const timers = pendingTimers();
    whenDeadlinePasses(null, open, never)();
    // A timer past 2^31 - 1 ms would run at once, with a warning (which fails this test).
    const cancel = whenDeadlinePasses(Date.now() + 2 ** 32, open, never);
    assert.equal(pendingTimers(), timers);
    cancel();
  });

  it("leaves no timer once cancelled", () => {
    const timers = pendingTimers();
    const cancel = whenDeadlinePasses(Date.now() + 60_000, open, never);
    assert.equal(pendingTimers(), timers + 1);
    cancel();
    assert.equal(pendingTimers(), timers);
  });

  it("leaves no timer behind a stream the client reset", async () => {
    const server = createHttp2Server();
    let watching: () => void = () => {};
    const watched = new Promise<void>((resolve) => {
      watching = resolve;
    });
    const closed = new Promise<void>((resolve) => {
      server.on("stream", (stream) => {
        whenDeadlinePasses(Date.now() + 60_000, stream, never);
        stream.once("close", () => setImmediate(resolve));
        watching();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const timers = pendingTimers();
      const stream = session.request({ ":method": "POST", ":path": "/" });
      stream.on("error", () => {});
      await watched;
      assert.equal(pendingTimers(), timers + 1);
      stream.close(h2.NGHTTP2_CANCEL);
      await closed;
      assert.equal(pendingTimers(), timers);
    } finally {
      session.destroy();
      server.close();
    }
  });
});

describe("the unary methods of a listener", () => {
  const label = createContextKey("", { description: "test label" });
  const spec = createServiceImplSpec<typeof Health>(Health, {
    check: (_req, ctx) => ({
      status:
        ctx.values.get(label) === "from-context" && ctx.values.get(operatorKey) === "alice"
          ? HealthCheckResponse_ServingStatus.SERVING
          : HealthCheckResponse_ServingStatus.UNKNOWN,
    }),
  });
  const methods = createUnaryCalls({
    services: [{ spec, readMaxBytes: 100 }],
    invoker: createUnaryInvoker({ services: [spec] }),
    contextValues: () => {
      const values = createContextValues();
      values.set(label, "from-context");
      return values;
    },
    acceptCompression: [compressionGzip],
    gate: (service, headers) =>
      headers.authorization === undefined
        ? new ConnectError(`${service.typeName} needs a credential`, Code.Unauthenticated)
        : "alice",
  });

  it("are the services' unary methods, with Connect's limits for each", () => {
    const check = methods.find(Health.method.check);
    assert.equal(check?.method, Health.method.check);
    assert.equal(check?.readMaxBytes, 100);
    assert.equal(check?.compressMinBytes, 1024, "Connect's default");
    const head = Buffer.alloc(5);
    head.writeUInt32BE(101, 1);
    assert.equal(check?.announced.tooLarge(head), true);
    assert.equal(methods.find(Health.method.watch), undefined, "streaming: Connect's own");
    assert.deepEqual(
      methods.acceptCompression.map((c) => c.name),
      ["gzip"],
    );
  });

  it("admission: a call refused or let in by its headers through the gate, before its body", () => {
    assert.equal(
      methods.admission(Health.method.check, { authorization: "Bearer s" }, undefined),
      "alice",
    );
    const refusal = methods.admission(Health.method.check, {}, undefined);
    assert.ok(refusal instanceof ConnectError);
    assert.equal(refusal.code, Code.Unauthenticated);
    assert.equal(refusal.rawMessage, `${Health.typeName} needs a credential`);
    const open = createUnaryCalls({
      services: [{ spec, readMaxBytes: 100 }],
      invoker: methods.invoker,
      contextValues: () => createContextValues(),
      acceptCompression: [],
    });
    assert.equal(open.admission(Health.method.check, {}, undefined), "", "no gate: no operator");
  });

  it("serialize an answer in the request's codec", () => {
    const check = methods.find(Health.method.check);
    assert.ok(check !== undefined);
    const result = {
      message: create(HealthCheckResponseSchema, {
        status: HealthCheckResponse_ServingStatus.SERVING,
      }),
      header: undefined,
      trailer: undefined,
    };
    const binary = serializedAnswer(check, true, result);
    assert.ok(binary instanceof Uint8Array);
    assert.equal(
      fromBinary(HealthCheckResponseSchema, binary).status,
      HealthCheckResponse_ServingStatus.SERVING,
    );
    const json = serializedAnswer(check, false, result);
    assert.ok(json instanceof Uint8Array);
    assert.equal(
      fromJsonString(HealthCheckResponseSchema, Buffer.from(json).toString()).status,
      HealthCheckResponse_ServingStatus.SERVING,
    );
  });

  it("answer a message that cannot be serialized as the call's error, INTERNAL", () => {
    const check = methods.find(Health.method.check);
    assert.ok(check !== undefined);
    // What a buggy implementation could hand back: a field of the wrong type.
    const broken = { ...create(HealthCheckResponseSchema), status: "SERVING" as unknown as number };
    const error = serializedAnswer(check, true, {
      message: broken,
      header: undefined,
      trailer: undefined,
    });
    assert.ok(error instanceof ConnectError);
    assert.equal(error.code, Code.Internal);
  });

  describe("the call of a request of node's compatibility layer", () => {
    /** What one call gave: its fields, its answer, its signal before the answer and once the response closed. */
    interface Seen {
      protocolName: string;
      requestMethod: string;
      url: string;
      agent: string | null;
      served: boolean;
      timeoutMs: number | undefined;
      abortedBefore: boolean;
      abortedWith: Code;
    }
    const seen = new Map<string, Seen>();
    const handler: NodeHandler = (req, res) => {
      const deadline = req.headers["x-deadline"] === undefined ? null : Date.now() + 60_000;
      const call = methods.callOf("grpc-web", req, res, deadline, "alice");
      const signal = call.signal();
      const abortedBefore = signal.aborted;
      void methods.invoker
        .invoke(Health.method.check, create(HealthCheckRequestSchema), call)
        .then((result) => {
          res.once("close", () =>
            seen.set(String(req.headers["x-n"]), {
              protocolName: call.protocolName,
              requestMethod: call.requestMethod,
              url: call.url(),
              agent: call.header().get("user-agent"),
              served:
                isMessage(result.message, HealthCheckResponseSchema) &&
                result.message.status === HealthCheckResponse_ServingStatus.SERVING,
              timeoutMs: call.timeoutMs?.(),
              abortedBefore,
              abortedWith: ConnectError.from(signal.reason).code,
            }),
          );
          res.end();
        });
    };
    const servers = [createHttp1Server(handler), createHttp2Server(handler)];
    const ports: number[] = [];

    before(async () => {
      for (const server of servers) {
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        ports.push((server.address() as AddressInfo).port);
      }
    });
    after(() =>
      Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))),
    );

    /** The call of one request, over HTTP/2 or not, with these headers. */
    async function callOf(
      http2: boolean,
      headers: Record<string, string>,
    ): Promise<Seen | undefined> {
      const n = String(seen.size);
      await send(ports[http2 ? 1 : 0] ?? 0, {
        http2,
        path: `/${Health.typeName}/Check?n=${n}`,
        headers: { "x-n": n, "user-agent": "unit-test", ...headers },
        body: "",
      });
      for (let i = 0; i < 100 && !seen.has(n); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return seen.get(n);
    }

    it("carries the protocol, method, URL and headers, and the listener's context values", async () => {
      for (const http2 of [false, true]) {
        const call = await callOf(http2, {});
        assert.equal(call?.protocolName, "grpc-web");
        assert.equal(call?.requestMethod, "POST");
        assert.match(
          call?.url ?? "",
          /^http:\/\/127\.0\.0\.1:\d+\/grpc\.health\.v1\.Health\/Check\?n=\d+$/,
        );
        assert.equal(call?.agent, "unit-test");
        assert.equal(call?.served, true, "the implementation saw the context values, the operator");
      }
    });

    it("has a signal aborted (CANCELED) once the answer is over", async () => {
      for (const http2 of [false, true]) {
        const call = await callOf(http2, {});
        assert.equal(call?.abortedBefore, false);
        assert.equal(call?.abortedWith, Code.Canceled);
      }
    });

    it("gives the time left before its deadline, and none without one", async () => {
      const timed = await callOf(true, { "x-deadline": "yes" });
      assert.ok(timed?.timeoutMs !== undefined && timed.timeoutMs > 0 && timed.timeoutMs <= 60_000);
      assert.equal((await callOf(true, {}))?.timeoutMs, undefined);
    });
  });
});
