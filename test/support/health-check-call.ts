import { create, isMessage, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ContextValues,
  createContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import { createUnaryInvoker, type UnaryResult } from "../../src/call/unary-invoker.js";
import {
  Health,
  type HealthCheckRequest,
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
} from "../../src/gen/health/v1/health_pb.js";

// One grpc.health.v1 Check call through a list of interceptors, made as every
// protocol's unary call is made (src/call/unary-invoker.ts), for the unit
// tests of interceptors: no listener, no wire format.

export interface HealthCheckCall {
  /** Outermost first, as the router takes them. */
  readonly interceptors: readonly Interceptor[];
  /** The implementation of Check. */
  readonly check: (
    req: HealthCheckRequest,
    ctx: HandlerContext,
  ) =>
    | MessageInitShape<typeof HealthCheckResponseSchema>
    | Promise<MessageInitShape<typeof HealthCheckResponseSchema>>;
  /** The request's `service` field. Default "". */
  readonly service?: string;
  /** The call's context values. Default: new ones. */
  readonly contextValues?: ContextValues;
  /** The request's headers. Default none. */
  readonly header?: Readonly<Record<string, string>>;
}

/** The call's answer; rejects with what the interceptors or the implementation throw. */
export async function callHealthCheck(
  call: HealthCheckCall,
): Promise<UnaryResult & { message: HealthCheckResponse }> {
  const invoker = createUnaryInvoker({
    services: [createServiceImplSpec<typeof Health>(Health, { check: call.check })],
    interceptors: call.interceptors,
  });
  const result = await invoker.invoke(
    Health.method.check,
    create(HealthCheckRequestSchema, { service: call.service ?? "" }),
    {
      protocolName: "connect",
      requestMethod: "POST",
      url: () => `http://localhost/${Health.typeName}/Check`,
      header: () => new Headers(call.header),
      contextValues: call.contextValues ?? createContextValues(),
      signal: () => new AbortController().signal,
    },
  );
  const { message } = result;
  if (!isMessage(message, HealthCheckResponseSchema)) {
    throw new Error(`Check answered a ${message.$typeName}`);
  }
  return { ...result, message };
}
