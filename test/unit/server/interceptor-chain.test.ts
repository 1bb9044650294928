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

describe("the interceptor chain", () => {
  it("has tracing only when it is on", () => {
    assert.equal(createInterceptorChain({}).length, 3);
    const tracing = createCallTracing(
      new TracerProvider().getTracer("t"),
      new W3CTraceContextPropagator(),
    );
    assert.equal(createInterceptorChain({ tracing }).length, 4);
  });

  it("checks the request's rules last, before the service, and logs the error the client gets", async () => {
    const chain = createInterceptorChain({});
    const invalid = { userId: "not-a-uuid", publicKey: PUBLIC_KEY };
    const refused = await call(chain, UserKeyService.method.putUserKey, invalid);
    const err = await connectError(refused.result);
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.rawMessage, /^userId: must be a UUID/);
    assert.equal(refused.exchange.code, Code.InvalidArgument, "the telemetry is outside the rules");
    assert.equal(err.metadata.get("x-request-id"), "req-1");
    const valid = await call(chain, UserKeyService.method.putUserKey, {
      userId: USER_ID,
      publicKey: PUBLIC_KEY,
    });
    await valid.result;
    assert.equal(valid.exchange.code, undefined);
  });

  it("logs the error the client gets: a failure is INTERNAL in neutral words, its cause logged", async () => {
    const chain = createInterceptorChain({});
    const { result, exchange } = await call(chain, UserKeyService.method.putUserKey, {
      userId: USER_ID,
      publicKey: "ff".repeat(32),
    });
    const err = await connectError(result);
    assert.equal(err.code, Code.Internal);
    assert.equal(err.rawMessage, "Internal error");
    assert.equal(exchange.code, Code.Internal);
    assert.match(exchange.message, /a bug in the service/);
  });

  it("asks no credential: the call gate let every call in before its body was read", async () => {
    const chain = createInterceptorChain({});
    const introspection = await call(chain, TokenIntrospectionService.method.introspectToken, {
      token: "pt_x",
    });
    assert.equal(
      (await introspection.result).message.$typeName,
      "perps.token.v1.IntrospectTokenResponse",
    );
  });
});
