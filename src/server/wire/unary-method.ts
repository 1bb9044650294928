import type { IncomingHttpHeaders } from "node:http";
import type { DescMessage, DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type ServiceImplSpec } from "@connectrpc/connect";
import {
  type Compression,
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import { type Admission, admittedAs, type CallGate } from "../../admin-auth/call-gate.js";
import { lazyCallSignal } from "../../call/call-signal.js";
import type { UnaryCall, UnaryInvoker, UnaryResult } from "../../call/unary-invoker.js";
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

export interface UnaryCallsOptions {
  services: readonly UnaryService[];
  /** The listener's one way into a call: its interceptors and the implementations. */
  invoker: UnaryInvoker;
  /** Context values of each call. */
  contextValues: (req: NodeServerRequest) => ContextValues;
  /** The compressions accepted and offered, as given to Connect's router. */
  acceptCompression: readonly Compression[];
  /** Asks a call's credentials by its headers before its body is read. Default: none refused. */
  gate?: CallGate;
}

/** What the protocol paths share: the methods, the gate, and the way into a call. */
export interface UnaryCalls {
  /** The unary method at a path of the services, if any. */
  find(method: DescMethod): UnaryMethod | undefined;
  readonly acceptCompression: Compression[];
  /**
   * The gate's answer to a call by its headers and connection alone, asked
   * before any body byte is read: its refusal, or the operator it is let in as.
   */
  admission(
    method: DescMethod,
    headers: IncomingHttpHeaders,
    socket: { remoteAddress?: string | undefined } | undefined,
  ): Admission;
  /** The call of a request of node's compatibility layer, let in as `operator`, as `invoke` takes it. */
  callOf(
    protocolName: string,
    req: NodeServerRequest,
    res: NodeServerResponse,
    deadline: number | null,
    operator: string,
  ): UnaryCall;
  /** The listener's invoker: the one way into a call. */
  readonly invoker: UnaryInvoker;
}

export function createUnaryCalls(opts: UnaryCallsOptions): UnaryCalls {
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
    find: (method) => methods.get(method),
    acceptCompression: [...opts.acceptCompression],
    admission:
      gate === undefined
        ? () => ""
        : (method, headers, socket) => gate(method.parent, headers, socket),
    callOf: (protocolName, req, res, deadline, operator) => ({
      protocolName,
      requestMethod: req.method ?? "POST",
      url: () => requestUrl(req),
      header: () => webHeaders(req.headers),
      contextValues: admittedAs(opts.contextValues(req), operator),
      signal: lazyCallSignal(res, deadline),
      ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
    }),
    invoker: opts.invoker,
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
