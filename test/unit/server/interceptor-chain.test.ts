import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import {
  Code,
  createContextValues,
  createServiceImplSpec,
  type Interceptor,
} from "@connectrpc/connect";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createUnaryInvoker } from "../../../src/call/unary-invoker.js";
import { Exchange, exchangeKey } from "../../../src/server/exchange.js";
import { createInterceptorChain } from "../../../src/server/interceptor-chain.js";
import { requestIdKey } from "../../../src/server/request-id.js";
import { createCallTracing } from "../../../src/tracing/call-tracing.js";
import { connectError } from "../../support/connect-error.js";

const OPERATOR_SECRET = "operator-secret";
const SERVICE_SECRET = "service-secret";
const USER_ID = "7d0e4a4e-3c53-4b1a-9a6e-2f1f0c1d2e3f";
const PUBLIC_KEY = "ab".repeat(32);

const specs = [
  createServiceImplSpec<typeof UserKeyService>(UserKeyService, {
    putUserKey: (req) => {
      if (req.publicKey === "ff".repeat(32)) {
        throw new Error("a bug in the service");
      }
      return {};
    },
  }),
  createServiceImplSpec<typeof TokenIntrospectionService>(TokenIntrospectionService, {
    introspectToken: () => ({ active: false }),
  }),
];

const callers = {
  operatorOf: (secret: string) => (secret === OPERATOR_SECRET ? "ops" : undefined),
  adminServices: [UserKeyService],
  serviceCredentialServices: [TokenIntrospectionService],
};

/** One call through `chain`, on a new exchange with request id "req-1": the error it fails with, and the exchange. */
async function call<I extends DescMessage, O extends DescMessage>(
  chain: readonly Interceptor[],
  method: DescMethodUnary<I, O>,
  input: MessageInitShape<I>,
  header: Record<string, string> = {},
) {
  const exchange = new Exchange("req-1", performance.now());
  const contextValues = createContextValues();
  contextValues.set(exchangeKey, exchange);
  contextValues.set(requestIdKey, exchange.requestId);
  const invoker = createUnaryInvoker({ services: specs, interceptors: chain });
  const result = invoker.invoke(method, create(method.input, input), {
    protocolName: "grpc",
    requestMethod: "POST",
    url: () => "http://localhost/x",
    header: () => new Headers(header),
    contextValues,
    signal: () => new AbortController().signal,
  });
  return { result, exchange };
}

const asOperator = { authorization: `Bearer ${OPERATOR_SECRET}` };

describe("the interceptor chain", () => {
  it("has tracing and the service credential only when they are on", () => {
    assert.equal(createInterceptorChain(callers).length, 5);
    const tracing = createCallTracing(
      new TracerProvider().getTracer("t"),
      new W3CTraceContextPropagator(),
    );
    const serviceCheck = (value: unknown) => (value === SERVICE_SECRET ? "svc" : false);
    assert.equal(createInterceptorChain({ ...callers, tracing, serviceCheck }).length, 7);
  });

  it("logs and counts a refused admin call, with the request id in the error", async () => {
    const chain = createInterceptorChain(callers);
    const { result, exchange } = await call(chain, UserKeyService.method.putUserKey, {
      userId: USER_ID,
      publicKey: PUBLIC_KEY,
    });
    const err = await connectError(result);
    assert.equal(err.code, Code.Unauthenticated);
    assert.equal(exchange.code, Code.Unauthenticated, "the telemetry is outside the admin check");
    assert.equal(err.metadata.get("x-request-id"), "req-1");
  });

  it("checks the operator before the request's rules, which come last, before the service", async () => {
    const chain = createInterceptorChain(callers);
    const invalid = { userId: "not-a-uuid", publicKey: PUBLIC_KEY };
    const anonymous = await call(chain, UserKeyService.method.putUserKey, invalid);
    assert.equal((await connectError(anonymous.result)).code, Code.Unauthenticated);
    const operator = await call(chain, UserKeyService.method.putUserKey, invalid, asOperator);
    const err = await connectError(operator.result);
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.rawMessage, /^userId: must be a UUID/);
    assert.equal(operator.exchange.code, Code.InvalidArgument);
    const valid = await call(
      chain,
      UserKeyService.method.putUserKey,
      { userId: USER_ID, publicKey: PUBLIC_KEY },
      asOperator,
    );
    await valid.result;
    assert.equal(valid.exchange.code, undefined);
  });

  it("logs the error the client gets: a failure is INTERNAL in neutral words, its cause logged", async () => {
    const chain = createInterceptorChain(callers);
    const { result, exchange } = await call(
      chain,
      UserKeyService.method.putUserKey,
      { userId: USER_ID, publicKey: "ff".repeat(32) },
      asOperator,
    );
    const err = await connectError(result);
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "Internal error");
    assert.equal(exchange.code, Code.Internal);
    assert.match(exchange.message, /a bug in the service/);
  });

  it("asks a calling service's credential only when the check is on", async () => {
    const token = { token: "pt_x" };
    const off = await call(
      createInterceptorChain(callers),
      TokenIntrospectionService.method.introspectToken,
      token,
    );
    assert.equal((await off.result).message.$typeName, "perps.token.v1.IntrospectTokenResponse");
    const on = createInterceptorChain({
      ...callers,
      serviceCheck: (value) => (value === SERVICE_SECRET ? "svc" : false),
    });
    const refused = await call(on, TokenIntrospectionService.method.introspectToken, token);
    assert.equal((await connectError(refused.result)).code, Code.Unauthenticated);
    assert.equal(refused.exchange.code, Code.Unauthenticated);
    const known = await call(on, TokenIntrospectionService.method.introspectToken, token, {
      "x-service-credential": SERVICE_SECRET,
    });
    await known.result;
  });
});
