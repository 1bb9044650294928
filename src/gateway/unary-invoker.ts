import {
  create,
  type DescMethod,
  type DescMethodUnary,
  isMessage,
  type Message,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImplSpec,
  type UnaryRequest,
} from "@connectrpc/connect";

type AnyFn = Parameters<Interceptor>[0];
type UnaryImpl = Extract<MethodImplSpec, { kind: "unary" }>["impl"];

/** What a unary call brings besides its request message. */
export interface UnaryCall {
  /** HTTP method of the request, e.g. "POST". */
  readonly requestMethod: string;
  /** The URL received. */
  readonly url: string;
  /** Request headers, as interceptors and the handler see them. */
  readonly header: Headers;
  readonly contextValues: ContextValues;
  /**
   * The call's AbortSignal, asked for only by code that uses it: most calls
   * never need one, and creating it costs more than the rest of the call
   * set-up together.
   */
  readonly signal: () => AbortSignal;
  /** Milliseconds left before the call's deadline (`HandlerContext.timeoutMs`). Default: no deadline. */
  readonly timeoutMs?: () => number | undefined;
}

/** A unary call's answer: the response message, headers and trailers. */
export interface UnaryResult {
  readonly message: Message;
  readonly header: Headers;
  readonly trailer: Headers;
}

export interface UnaryInvokerOptions {
  /** The implementations (`createServiceImplSpec(service, impl)`); their unary methods can be invoked. */
  services: readonly ServiceImplSpec[];
  /** Interceptors, outermost first, as given to `createConnectRouter`. Default: none. */
  interceptors?: readonly Interceptor[];
  /** What handlers see as `HandlerContext.protocolName`. Default "rest". */
  protocolName?: string;
}

export interface UnaryInvoker {
  /**
   * Runs the method's implementation through the interceptors, as Connect's
   * handlers do for a unary call, with the request message as it is: no wire
   * format in between. Rejects with what the interceptors or the
   * implementation throw, and with UNIMPLEMENTED for a method that is not a
   * unary method of the services.
   */
  invoke(method: DescMethod, input: Message, call: UnaryCall): Promise<UnaryResult>;
}

const noTimeout = () => undefined;

// Carries a call's deadline from `invoke` to the handler context, through whatever interceptors do.
const timeoutKey = createContextKey<() => number | undefined>(noTimeout, {
  description: "unary invoker deadline",
});

/**
 * Invokes service implementations the way `@connectrpc/connect` does
 * (`invokeUnaryImplementation`): the same interceptor chain, request and
 * response objects and handler context, so a call made here is seen by
 * interceptors and handlers exactly like a Connect or gRPC call. The REST
 * gateway uses it to hand over the transcoded message directly instead of
 * serializing it to bytes for a Connect handler that parses it again.
 */
export function createUnaryInvoker(opts: UnaryInvokerOptions): UnaryInvoker {
  const interceptors = [...(opts.interceptors ?? [])].reverse();
  const chains = new Map<DescMethod, { unary: DescMethodUnary; chain: AnyFn }>();
  for (const service of opts.services) {
    for (const spec of Object.values(service.methods)) {
      if (spec.kind === "unary") {
        chains.set(spec.method, {
          unary: spec.method,
          chain: interceptors.reduce(
            (next, interceptor) => interceptor(next),
            implCall(spec.impl, opts.protocolName ?? "rest"),
          ),
        });
      }
    }
  }

  return {
    async invoke(method, input, call) {
      const served = chains.get(method);
      if (served === undefined) {
        throw new ConnectError(
          `${method.parent.typeName}.${method.name} is not a unary method served here`,
          Code.Unimplemented,
        );
      }
      if (call.timeoutMs !== undefined) {
        call.contextValues.set(timeoutKey, call.timeoutMs);
      }
      const request: UnaryRequest = {
        stream: false,
        message: input,
        method: served.unary,
        service: method.parent,
        requestMethod: call.requestMethod,
        url: call.url,
        header: call.header,
        contextValues: call.contextValues,
        get signal() {
          return call.signal();
        },
      };
      const response = await served.chain(request);
      if (response.stream) {
        throw new ConnectError("an interceptor answered a unary call with a stream", Code.Internal);
      }
      return { message: response.message, header: response.header, trailer: response.trailer };
    },
  };
}

/** The innermost step of the chain: the implementation, with a handler context made from the request. */
function implCall(impl: UnaryImpl, protocolName: string): AnyFn {
  return async (req) => {
    if (req.stream) {
      throw new ConnectError("a unary method got a stream", Code.Internal);
    }
    const responseHeader = new Headers();
    const responseTrailer = new Headers();
    const context: HandlerContext = {
      method: req.method,
      service: req.service,
      requestMethod: req.requestMethod,
      url: req.url,
      protocolName,
      timeoutMs: req.contextValues.get(timeoutKey),
      requestHeader: req.header,
      responseHeader,
      responseTrailer,
      values: req.contextValues,
      get signal() {
        return req.signal;
      },
    };
    const output = await impl(req.message, context);
    const schema = req.method.output;
    return {
      stream: false,
      method: req.method,
      service: req.service,
      header: responseHeader,
      trailer: responseTrailer,
      message: isMessage(output, schema) ? output : create(schema, output),
    };
  };
}
