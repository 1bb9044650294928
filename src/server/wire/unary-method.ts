import type { IncomingHttpHeaders } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { DescMessage, DescMethod, Message } from "@bufbuild/protobuf";
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
import {
  type AnnouncedSize,
  type BodySource,
  type RequestBody,
  readBody,
} from "../../http/request-body.js";
import { requestUrl } from "../../http/request-url.js";
import { webHeaders } from "../../http/web-headers.js";
import type { Exchange } from "../exchange.js";
import { callError, failAnswer } from "./answer-failure.js";

/** Bytes of an envelope's head: one byte of flags, four of length. */
export const ENVELOPE_HEAD_BYTES = 5;

/**
 * An enveloped body is over the limit as soon as its first prefix says so:
 * reading stops there, and Connect's envelope decoder refuses it in its words
 * (RESOURCE_EXHAUSTED, as grpc-go does), not after `readMaxBytes` more bytes.
 */
export function announcedEnvelope(readMaxBytes: number): AnnouncedSize {
  return {
    bytes: ENVELOPE_HEAD_BYTES,
    tooLarge: (head) => head.readUInt32BE(1) > readMaxBytes,
  };
}

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

/** Where a unary call's body is read from, and within what. */
export interface UnaryBodyRead {
  /** The request: node's request, or the raw HTTP/2 stream. */
  readonly source: BodySource;
  /** Where its answer goes (the deadline's timer ends with it). */
  readonly target: NodeServerResponse | ServerHttp2Stream;
  /** Unix ms; null for none. */
  readonly deadline: number | null;
  /**
   * gRPC and gRPC-Web: a deadline that passes while the body is still
   * arriving is answered then, as grpc-go does. Connect reads the body first,
   * as Connect's handler does.
   */
  readonly answersAtDeadline: boolean;
  /** Bytes read at most (an envelope's head included). */
  readonly readMaxBytes: number;
  /** The prefix that announces too many (gRPC's envelope); undefined for none. */
  readonly announced: AnnouncedSize | undefined;
}

/**
 * One unary call as its wire protocol serves it, once its headers were read
 * and the gate let it in: its body's read, how its message is decoded and
 * how its answers are written. Each protocol makes one (connect-unary.ts,
 * grpc-unary.ts, grpc-stream-unary.ts); `serveUnary` runs them all.
 */
export interface UnaryServing extends UnaryBodyRead {
  readonly unary: UnaryMethod;
  readonly exchange: Exchange | undefined;
  /** Whether the answer has begun (a refusal at the deadline). */
  answered(): boolean;
  /** The request message; throws or rejects with the refusal to answer. */
  decode(body: RequestBody): Message | Promise<Message>;
  /** The call, as the invoker takes it. */
  call(): UnaryCall;
  /** Writes the call's answer (its message serialized, or the failure to serialize it). */
  answer(result: UnaryResult): void | Promise<void>;
  /** Writes the call's error. */
  answerError(error: ConnectError): void | Promise<void>;
  /** Writes a refusal made before the call, recorded on the exchange. */
  refuse(error: ConnectError): void | Promise<void>;
}

/**
 * The one serve path of unary calls on every wire protocol (Connect, gRPC,
 * gRPC-Web; node's response or a raw stream): the body read within its
 * limit, then served (`serveUnaryBody`).
 */
export function serveUnary(methods: UnaryCalls, serving: UnaryServing): void {
  readUnaryBody(serving, (body) => serveUnaryBody(methods, serving, body));
}

/**
 * Reads a call's body within its limit, then `read` has it; undefined when
 * its deadline passed first (the body still arriving) and the protocol
 * answers then.
 */
export function readUnaryBody(
  at: UnaryBodyRead,
  read: (body: RequestBody | undefined) => void,
): void {
  let late = false;
  const cancel = at.answersAtDeadline
    ? whenDeadlinePasses(at.deadline, at.target, () => {
        late = true;
        read(undefined);
      })
    : noTimer;
  readBody(
    at.source,
    at.readMaxBytes,
    (body) => {
      cancel();
      if (!late) {
        read(body);
      }
    },
    at.announced,
  );
}

/**
 * Serves a call once its body was read (undefined: its deadline passed
 * first): decoded, made through the listener's one invoker, answered in its
 * protocol; a failure of ours while answering is the one empty 500.
 */
export function serveUnaryBody(
  methods: UnaryCalls,
  serving: UnaryServing,
  body: RequestBody | undefined,
): void {
  if (body === undefined) {
    if (!serving.answered()) {
      refuseWith(serving, deadlinePassed());
    }
    return;
  }
  if (serving.answered()) {
    return; // Refused at the deadline.
  }
  const { deadline } = serving;
  if (serving.answersAtDeadline && deadline !== null && body.ended && Date.now() >= deadline) {
    refuseWith(serving, deadlinePassed());
    return;
  }
  let input: Message | Promise<Message>;
  try {
    input = serving.decode(body);
  } catch (reason) {
    refuseWith(serving, callError(reason));
    return;
  }
  if (input instanceof Promise) {
    input.then(
      (message) => invoke(methods, serving, message),
      (reason: unknown) => refuseWith(serving, callError(reason)),
    );
  } else {
    invoke(methods, serving, input);
  }
}

function invoke(methods: UnaryCalls, serving: UnaryServing, input: Message): void {
  methods.invoker
    .invoke(serving.unary.method, input, serving.call())
    .then(
      (result) => serving.answer(result),
      (reason: unknown) => serving.answerError(callError(reason)),
    )
    .catch((reason: unknown) => failAnswer(serving.target, serving.exchange, reason));
}

function refuseWith(serving: UnaryServing, error: ConnectError): void {
  const refusing = serving.refuse(error);
  if (refusing instanceof Promise) {
    refusing.catch((reason: unknown) => failAnswer(serving.target, serving.exchange, reason));
  }
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
