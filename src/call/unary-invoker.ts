import {
  create,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
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
  type UnaryResponse,
} from "@connectrpc/connect";

type AnyFn = Parameters<Interceptor>[0];
type UnaryImpl = Extract<MethodImplSpec, { kind: "unary" }>["impl"];

/** What a unary call brings besides its request message. */
export interface UnaryCall {
  /** What handlers see as `HandlerContext.protocolName`: connect, grpc, grpc-web or rest. */
  readonly protocolName: string;
  /** HTTP method of the request, e.g. "POST". */
  readonly requestMethod: string;
  /** The URL received, made when first asked for (most calls never ask). */
  readonly url: () => string;
  /** Request headers, as interceptors and the handler see them, made when first asked for. */
  readonly header: () => Headers;
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

/** A unary call's answer: the response message, headers and trailers (undefined: none were set). */
export interface UnaryResult {
  readonly message: Message;
  readonly header: Headers | undefined;
  readonly trailer: Headers | undefined;
}

export interface UnaryInvokerOptions {
  /** The implementations (`createServiceImplSpec(service, impl)`); their unary methods can be invoked. */
  services: readonly ServiceImplSpec[];
  /** Interceptors, outermost first, as given to `createConnectRouter`. Default: none. */
  interceptors?: readonly Interceptor[];
}

export interface UnaryInvoker {
  /**
   * Runs the method's implementation through the interceptors, as Connect's
   * handlers do for a unary call, with the request message as it is: no wire
   * format in between. Rejects with what the interceptors or the
   * implementation throw, and with UNIMPLEMENTED for a method that is not a
   * unary method of the services. Every unary call of every protocol enters
   * the service here.
   */
  invoke(method: DescMethod, input: Message, call: UnaryCall): Promise<UnaryResult>;
}

const noTimeout = () => undefined;

// Carry a call's deadline and protocol from `invoke` to the handler context, through whatever interceptors do.
const timeoutKey = createContextKey<() => number | undefined>(noTimeout, {
  description: "unary invoker deadline",
});
const protocolKey = createContextKey("", { description: "unary invoker protocol" });

/**
 * Invokes service implementations the way `@connectrpc/connect` does
 * (`invokeUnaryImplementation`): the same interceptor chain, request and
 * response objects and handler context. A listener makes one, and every
 * unary call it serves, on every protocol (Connect, gRPC, gRPC-Web and the
 * REST mapping), goes through it: one chain, one way in. Only the streaming
 * methods go through Connect's own handler.
 */
export function createUnaryInvoker(opts: UnaryInvokerOptions): UnaryInvoker {
  const interceptors = [...(opts.interceptors ?? [])].reverse();
  const chains = new Map<DescMethod, { unary: DescMethodUnary; chain: AnyFn }>();
  for (const service of opts.services) {
    for (const spec of Object.values(service.methods)) {
      if (spec.kind === "unary") {
        chains.set(spec.method, {
          unary: spec.method,
          chain: interceptors.reduce((next, interceptor) => interceptor(next), implCall(spec.impl)),
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
      call.contextValues.set(protocolKey, call.protocolName);
      if (call.timeoutMs !== undefined) {
        call.contextValues.set(timeoutKey, call.timeoutMs);
      }
      const request = new InvokedRequest(served.unary, input, call);
      const response = await served.chain(request);
      if (response.stream) {
        throw new ConnectError("an interceptor answered a unary call with a stream", Code.Internal);
      }
      return response instanceof ImplResponse
        ? {
            message: response.message,
            header: response.written.header,
            trailer: response.written.trailer,
          }
        : { message: response.message, header: response.header, trailer: response.trailer };
    },
  };
}

/**
 * A call's request as interceptors see it. A class, not an object literal
 * with getters: V8 gives each such literal accessors of its own, which cost
 * more than the rest of the call's set-up. The URL, the headers and the
 * signal are made only for code that reads them.
 */
class InvokedRequest implements UnaryRequest {
  readonly stream = false;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly contextValues: ContextValues;
  #url: string | undefined = undefined;
  #header: Headers | undefined = undefined;
  constructor(
    readonly method: DescMethodUnary,
    readonly message: Message,
    private readonly call: UnaryCall,
  ) {
    this.service = method.parent;
    this.requestMethod = call.requestMethod;
    this.contextValues = call.contextValues;
  }
  get url(): string {
    this.#url ??= this.call.url();
    return this.#url;
  }
  get header(): Headers {
    this.#header ??= this.call.header();
    return this.#header;
  }
  get signal(): AbortSignal {
    return this.call.signal();
  }
}

/** The handler context of a call (a class for the reason `InvokedRequest` is one). */
class ImplContext implements HandlerContext {
  readonly method: DescMethodUnary;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly timeoutMs: () => number | undefined;
  readonly protocolName: string;
  readonly values: ContextValues;
  constructor(
    private readonly req: UnaryRequest,
    private readonly written: WrittenHeaders,
  ) {
    this.method = req.method;
    this.service = req.service;
    this.requestMethod = req.requestMethod;
    this.timeoutMs = req.contextValues.get(timeoutKey);
    this.protocolName = req.contextValues.get(protocolKey);
    this.values = req.contextValues;
  }
  get url(): string {
    return this.req.url;
  }
  get requestHeader(): Headers {
    return this.req.header;
  }
  get responseHeader(): Headers {
    return this.written.madeHeader();
  }
  get responseTrailer(): Headers {
    return this.written.madeTrailer();
  }
  get signal(): AbortSignal {
    return this.req.signal;
  }
}

/** The response headers and trailers an implementation wrote; each made when first used. */
class WrittenHeaders {
  header: Headers | undefined = undefined;
  trailer: Headers | undefined = undefined;
  madeHeader(): Headers {
    this.header ??= new Headers();
    return this.header;
  }
  madeTrailer(): Headers {
    this.trailer ??= new Headers();
    return this.trailer;
  }
}

/**
 * The implementation's response: its headers and trailers are made only if
 * an interceptor reads them (most answers have none).
 */
class ImplResponse implements UnaryResponse {
  readonly stream = false;
  constructor(
    readonly method: DescMethodUnary,
    readonly service: DescService,
    readonly message: Message,
    readonly written: WrittenHeaders,
  ) {}
  get header(): Headers {
    return this.written.madeHeader();
  }
  get trailer(): Headers {
    return this.written.madeTrailer();
  }
}

/** The innermost step of the chain: the implementation, with a handler context made from the request. */
function implCall(impl: UnaryImpl): AnyFn {
  return async (req) => {
    if (req.stream) {
      throw new ConnectError("a unary method got a stream", Code.Internal);
    }
    const written = new WrittenHeaders();
    const context = new ImplContext(req, written);
    const output = await impl(req.message, context);
    const schema = req.method.output;
    return new ImplResponse(
      req.method,
      req.service,
      isMessage(output, schema) ? output : create(schema, output),
      written,
    );
  };
}
