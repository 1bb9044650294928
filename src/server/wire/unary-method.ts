import type { IncomingHttpHeaders } from "node:http";
import type { DescMessage, DescMethod, Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type Interceptor,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import {
  type Compression,
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import type { CallGate } from "../../admin-auth/call-gate.js";
import { lazyCallSignal } from "../../call/call-signal.js";
import {
  createUnaryInvoker,
  type UnaryCall,
  type UnaryInvoker,
  type UnaryResult,
} from "../../call/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../../http/node-handler.js";
import type { AnnouncedSize } from "../../http/request-body.js";
import { requestUrl } from "../../http/request-url.js";
import { webHeaders } from "../../http/web-headers.js";
import { callError } from "./answer-failure.js";
import { announcedEnvelope } from "./enveloped-input.js";

/** A unary method served by the wire paths, with what Connect's handler would use for it. */
export interface UnaryMethod {
  readonly method: DescMethod;
  /** Connect's own serialization of its messages, with the size limits below. */
  readonly serialization: MethodSerializationLookup<DescMessage, DescMessage>;
  /** Largest request message accepted, in bytes. */
  readonly readMaxBytes: number;
  /** Its envelope's prefix announcing more than `readMaxBytes`: read no further. */
  readonly announced: AnnouncedSize;
  /** Smallest answer compressed when the client accepts compression (Connect's default, 1 KiB). */
  readonly compressMinBytes: number;
}

/** A service whose unary methods the wire paths serve. */
export interface UnaryService {
  readonly spec: ServiceImplSpec;
  /** Largest request message accepted, in bytes. */
  readonly readMaxBytes: number;
}

export interface UnaryServingOptions {
  services: readonly UnaryService[];
  /** Interceptors, outermost first, as given to Connect's router. */
  interceptors: readonly Interceptor[];
  /** Context values of each call. */
  contextValues: (req: NodeServerRequest) => ContextValues;
  /** The compressions accepted and offered, as given to Connect's router. */
  acceptCompression: readonly Compression[];
  /** Refuses a call by its headers before its body is read (credentials). Default: none refused. */
  gate?: CallGate;
}

/** The protocols of the wire paths, as handlers see them (`HandlerContext.protocolName`). */
type WireProtocol = "connect" | "grpc" | "grpc-web";

/** What the protocol paths share: the methods, and the call through the interceptors. */
export interface UnaryServing {
  /** The unary method at a path of the services, if any. */
  method(method: DescMethod): UnaryMethod | undefined;
  readonly acceptCompression: Compression[];
  /** The refusal of a call by its headers and connection alone (the gate), before any body byte is read. */
  admit(
    method: DescMethod,
    headers: IncomingHttpHeaders,
    socket: { remoteAddress?: string | undefined } | undefined,
  ): ConnectError | undefined;
  /**
   * Runs the call through the interceptors and the implementation, as
   * Connect's handlers do, with `protocol` as the handler's protocol name
   * and `deadline` (Unix ms, null for none) as the call's deadline.
   */
  /** Runs the call as `invoke` does, from what the caller made of its request. */
  call(
    protocol: WireProtocol,
    method: DescMethod,
    input: Message,
    call: UnaryCall,
  ): Promise<UnaryResult>;
  invoke(
    protocol: WireProtocol,
    method: DescMethod,
    input: Message,
    req: NodeServerRequest,
    res: NodeServerResponse,
    deadline: number | null,
  ): Promise<UnaryResult>;
}

export function createUnaryServing(opts: UnaryServingOptions): UnaryServing {
  const specs = opts.services.map((s) => s.spec);
  const invokerFor = (protocolName: string) =>
    createUnaryInvoker({ services: specs, interceptors: opts.interceptors, protocolName });
  const invokers: Record<WireProtocol, UnaryInvoker> = {
    connect: invokerFor("connect"),
    grpc: invokerFor("grpc"),
    "grpc-web": invokerFor("grpc-web"),
  };
  const { gate } = opts;
  const methods = new Map<DescMethod, UnaryMethod>();
  for (const service of opts.services) {
    const limits = validateReadWriteMaxBytes(service.readMaxBytes, undefined, undefined);
    for (const spec of Object.values(service.spec.methods)) {
      if (spec.kind === "unary") {
        methods.set(spec.method, {
          method: spec.method,
          serialization: createMethodSerializationLookup(spec.method, undefined, undefined, limits),
          readMaxBytes: limits.readMaxBytes,
          announced: announcedEnvelope(limits.readMaxBytes),
          compressMinBytes: limits.compressMinBytes,
        });
      }
    }
  }
  return {
    method: (method) => methods.get(method),
    acceptCompression: [...opts.acceptCompression],
    admit: (method, headers, socket) => gate?.(method.parent, headers, socket),
    call: (protocol, method, input, call) => invokers[protocol].invoke(method, input, call),
    invoke(protocol, method, input, req, res, deadline) {
      return invokers[protocol].invoke(method, input, {
        requestMethod: req.method ?? "POST",
        url: () => requestUrl(req),
        header: () => webHeaders(req.headers),
        contextValues: opts.contextValues(req),
        signal: lazyCallSignal(res, deadline),
        ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
      });
    },
  };
}

/** The answer's message in the request's codec, or a failure to serialize it as the call's error. */
export function serializedAnswer(
  served: UnaryMethod,
  binary: boolean,
  result: UnaryResult,
): Uint8Array | ConnectError {
  try {
    return served.serialization.getO(binary).serialize(result.message);
  } catch (reason) {
    return callError(reason);
  }
}

/**
 * The refusal of a call whose deadline passed before it could be made (its
 * body still arriving): DEADLINE_EXCEEDED, as grpc-go answers, never a call
 * made after its caller stopped waiting.
 */
export function deadlinePassed(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}

// Node runs a longer timer at once (with a warning); REQUEST_TIMEOUT_MS (at most an hour) ends such a read first.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs `passed` at `deadline` (Unix ms) unless the returned function is
 * called first or `exchange` closes (a reset stream leaves no timer behind);
 * nothing when there is no deadline, or one farther than a timer reaches.
 */
export function whenDeadlinePasses(
  deadline: number | null,
  exchange: { once(event: "close", listener: () => void): unknown },
  passed: () => void,
): () => void {
  if (deadline === null || deadline - Date.now() > LONGEST_TIMER_MS) {
    return noTimer;
  }
  const timer = setTimeout(passed, deadline - Date.now());
  const cancel = () => clearTimeout(timer);
  exchange.once("close", cancel);
  return cancel;
}

function noTimer(): void {}

/** The deadline of a call whose timeout is `timeoutMs` from now; null for none. */
export function deadlineAfter(timeoutMs: number | undefined): number | null {
  return timeoutMs === undefined ? null : Date.now() + timeoutMs;
}
