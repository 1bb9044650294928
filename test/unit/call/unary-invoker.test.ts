import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createServiceImplSpec,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { createUnaryInvoker, type UnaryCall } from "../../../src/call/unary-invoker.js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
} from "../../../src/gen/health/v1/health_pb.js";

const seen: { protocol: string; timeoutMs: number | undefined; agent: string | null }[] = [];
const impl: Partial<ServiceImpl<typeof Health>> = {
  check(req, ctx) {
    seen.push({
      protocol: ctx.protocolName,
      timeoutMs: ctx.timeoutMs(),
      agent: req.service === "reads-headers" ? ctx.requestHeader.get("user-agent") : null,
    });
    if (req.service === "fails") {
      throw new ConnectError("no such service", Code.NotFound);
    }
    if (req.service === "with-headers") {
      ctx.responseHeader.set("x-answer", "1");
      ctx.responseTrailer.set("x-trailer", "2");
    }
    return { status: HealthCheckResponse_ServingStatus.SERVING };
  },
};
const spec = createServiceImplSpec(Health, impl);

function callOf(protocolName: string, extra: Partial<UnaryCall> = {}): UnaryCall {
  return {
    protocolName,
    requestMethod: "POST",
    url: () => "http://localhost/grpc.health.v1.Health/Check",
    header: () => new Headers({ "user-agent": "test" }),
    contextValues: createContextValues(),
    signal: () => new AbortController().signal,
    ...extra,
  };
}

const check = (service: string) => create(HealthCheckRequestSchema, { service });

describe("the unary invoker", () => {
  it("is one chain for every protocol: each call's protocol reaches the handler", async () => {
    seen.length = 0;
    const order: string[] = [];
    const tag =
      (name: string): Interceptor =>
      (next) =>
      (req) => {
        order.push(name);
        return next(req);
      };
    const invoker = createUnaryInvoker({
      services: [spec],
      interceptors: [tag("outer"), tag("inner")],
    });
    for (const protocol of ["connect", "grpc", "grpc-web", "rest"]) {
      const result = await invoker.invoke(Health.method.check, check(""), callOf(protocol));
      assert.equal(result.message.$typeName, "grpc.health.v1.HealthCheckResponse");
    }
    assert.deepEqual(
      seen.map((s) => s.protocol),
      ["connect", "grpc", "grpc-web", "rest"],
    );
    // Outermost first, once per call.
    assert.deepEqual(order, [
      "outer",
      "inner",
      "outer",
      "inner",
      "outer",
      "inner",
      "outer",
      "inner",
    ]);
  });

  it("gives the handler the call's deadline, and no deadline when the call has none", async () => {
    seen.length = 0;
    const invoker = createUnaryInvoker({ services: [spec] });
    await invoker.invoke(Health.method.check, check(""), callOf("grpc", { timeoutMs: () => 1234 }));
    await invoker.invoke(Health.method.check, check(""), callOf("grpc"));
    assert.deepEqual(
      seen.map((s) => s.timeoutMs),
      [1234, undefined],
    );
  });

  it("makes the request's headers only for a handler that reads them", async () => {
    seen.length = 0;
    let made = 0;
    const header = () => {
      made++;
      return new Headers({ "user-agent": "test" });
    };
    const invoker = createUnaryInvoker({ services: [spec] });
    await invoker.invoke(Health.method.check, check(""), callOf("rest", { header }));
    assert.equal(made, 0);
    await invoker.invoke(Health.method.check, check("reads-headers"), callOf("rest", { header }));
    assert.equal(made, 1);
    assert.equal(seen[1]?.agent, "test");
  });

  it("answers the headers and trailers a handler set, and none when it set none", async () => {
    const invoker = createUnaryInvoker({ services: [spec] });
    const plain = await invoker.invoke(Health.method.check, check(""), callOf("grpc"));
    assert.equal(plain.header, undefined);
    assert.equal(plain.trailer, undefined);
    const set = await invoker.invoke(Health.method.check, check("with-headers"), callOf("grpc"));
    assert.equal(set.header?.get("x-answer"), "1");
    assert.equal(set.trailer?.get("x-trailer"), "2");
  });

  it("rejects with what the handler throws, through the interceptors", async () => {
    const codes: Code[] = [];
    const observe: Interceptor = (next) => async (req) => {
      try {
        return await next(req);
      } catch (err) {
        codes.push(ConnectError.from(err).code);
        throw err;
      }
    };
    const invoker = createUnaryInvoker({ services: [spec], interceptors: [observe] });
    await assert.rejects(
      invoker.invoke(Health.method.check, check("fails"), callOf("connect")),
      (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound,
    );
    assert.deepEqual(codes, [Code.NotFound]);
  });

  it("refuses a method that is not a unary method of its services: UNIMPLEMENTED", async () => {
    const invoker = createUnaryInvoker({ services: [spec] });
    await assert.rejects(
      invoker.invoke(Health.method.watch, check(""), callOf("grpc")),
      (err: unknown) => err instanceof ConnectError && err.code === Code.Unimplemented,
    );
    const none = createUnaryInvoker({ services: [] });
    await assert.rejects(
      none.invoke(Health.method.check, check(""), callOf("grpc")),
      (err: unknown) => err instanceof ConnectError && err.code === Code.Unimplemented,
    );
  });
});
