import { type DescMethod, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type Interceptor,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { isCallOver, lazyCallSignal } from "../gateway/call-signal.js";
import { createUnaryInvoker, type UnaryResult } from "../gateway/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";

/** A service whose unary methods the lean path serves. */
export interface GrpcUnaryService {
  readonly spec: ServiceImplSpec;
  /** Largest request message accepted, in bytes. */
  readonly readMaxBytes: number;
}

export interface GrpcUnaryOptions {
  services: readonly GrpcUnaryService[];
  /** Interceptors, outermost first, as given to Connect's router. */
  interceptors: readonly Interceptor[];
  /** Context values of each call. */
  contextValues: (req: NodeServerRequest) => ContextValues;
}

/**
 * Hands a request to Connect's own handler, with the request body when it
 * has already been read (the bytes read so far, then the rest of the stream).
 */
export type GrpcFallback = (body: AsyncIterable<Uint8Array> | undefined) => void;

export interface GrpcUnary {
  /**
   * Serves a gRPC unary call of one of the services, or answers false at
   * once, before reading anything, for a request it does not take (not
   * HTTP/2 POST application/grpc[+proto], compressed, with a `grpc-timeout`
   * Connect refuses, or not a unary method served here). A call it took but whose body is not exactly
   * one uncompressed, well-formed message within the limit goes to
   * `fallback`, so Connect refuses it exactly as it always has.
   */
  serve(
    method: DescMethod,
    req: NodeServerRequest,
    res: NodeServerResponse,
    fallback: GrpcFallback,
  ): boolean;
}

const HEADER_BYTES = 5;
const contentTypeProto = "application/grpc+proto";

/**
 * gRPC unary calls without Connect's generic handler (universal request and
 * response objects, async iterables, envelope transforms, an AbortController
 * per call): the body is read into one buffer, the message decoded, the
 * implementation run through the same interceptors by the unary invoker
 * (protocol name "grpc"), and the answer written as one DATA frame and the
 * trailers, as Connect writes them (its own `setTrailerStatus`).
 */
export function createGrpcUnary(opts: GrpcUnaryOptions): GrpcUnary {
  const invoker = createUnaryInvoker({
    services: opts.services.map((s) => s.spec),
    interceptors: opts.interceptors,
    protocolName: "grpc",
  });
  const limits = new Map<DescMethod, number>();
  for (const service of opts.services) {
    for (const spec of Object.values(service.spec.methods)) {
      if (spec.kind === "unary") {
        limits.set(spec.method, service.readMaxBytes);
      }
    }
  }

  return {
    serve(method, req, res, fallback) {
      const readMaxBytes = limits.get(method);
      if (readMaxBytes === undefined || !isLeanRequest(req) || method.methodKind !== "unary") {
        return false;
      }
      const deadline = deadlineOf(req);
      if (deadline === undefined) {
        return false;
      }
      readBody(req, readMaxBytes + HEADER_BYTES, (chunks, total, ended) => {
        const body = ended ? singleMessage(chunks, total, readMaxBytes) : undefined;
        let input: Message | undefined;
        if (body !== undefined) {
          try {
            input = fromBinary(method.input, body);
          } catch {
            input = undefined;
          }
        }
        if (input === undefined) {
          fallback(replay(chunks, ended ? undefined : req));
          return;
        }
        invoke(method, input, req, res, deadline);
      });
      return true;
    },
  };

  function invoke(
    method: DescMethod,
    input: Message,
    req: NodeServerRequest,
    res: NodeServerResponse,
    deadline: number | null,
  ): void {
    const authority = "authority" in req ? req.authority : req.headers.host;
    const encrypted = "encrypted" in req.socket && req.socket.encrypted === true;
    invoker
      .invoke(method, input, {
        requestMethod: "POST",
        url: `${encrypted ? "https" : "http"}://${authority}${req.url ?? ""}`,
        header: webHeaders(req.headers),
        contextValues: opts.contextValues(req),
        signal: lazyCallSignal(res, deadline),
        ...(deadline === null ? {} : { timeoutMs: () => deadline - Date.now() }),
      })
      .then(
        (result) => answer(res, method, result),
        (reason: unknown) => answerError(res, reason),
      )
      .catch(() => {
        // The stream is gone (the client reset it): nothing to answer.
      });
  }
}

/** HTTP/2, POST, binary gRPC, identity encoding and no deadline: what the lean path takes. */
function isLeanRequest(req: NodeServerRequest): boolean {
  if (req.httpVersionMajor !== 2 || req.method !== "POST") {
    return false;
  }
  const type = req.headers["content-type"];
  if (type !== "application/grpc" && type !== contentTypeProto) {
    return false;
  }
  const encoding = req.headers["grpc-encoding"];
  return encoding === undefined || encoding === "identity";
}

/**
 * The call's deadline from `grpc-timeout`, parsed by Connect's own parser:
 * null for none, undefined for a value Connect refuses (left to it).
 */
function deadlineOf(req: NodeServerRequest): number | null | undefined {
  const value = req.headers["grpc-timeout"];
  if (value === undefined) {
    return null;
  }
  if (typeof value !== "string") {
    return undefined;
  }
  const timeout = parseTimeout(value, Number.MAX_SAFE_INTEGER);
  if (timeout.error !== undefined || timeout.timeoutMs === undefined) {
    return undefined;
  }
  return Date.now() + timeout.timeoutMs;
}

/**
 * Reads the body until it ends, or until it holds more than `maxBytes` (the
 * largest single message): then it stops reading, and `done` gets what was
 * read, with `ended` false.
 */
function readBody(
  req: NodeServerRequest,
  maxBytes: number,
  done: (chunks: Buffer[], total: number, ended: boolean) => void,
): void {
  const chunks: Buffer[] = [];
  let total = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    total += chunk.length;
    if (total > maxBytes) {
      stop();
      req.pause();
      done(chunks, total, false);
    }
  };
  const onEnd = () => {
    stop();
    done(chunks, total, true);
  };
  // A reset stream: the response's close tells the listener; nothing to answer.
  const onError = () => stop();
  function stop(): void {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
  }
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
}

/** The message of a body that is exactly one uncompressed envelope within the limit; else undefined. */
export function singleMessage(
  chunks: readonly Buffer[],
  total: number,
  readMaxBytes: number,
): Uint8Array | undefined {
  if (total < HEADER_BYTES) {
    return undefined;
  }
  const body = chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
  const length = body.readUInt32BE(1);
  if (body[0] !== 0 || length > readMaxBytes || total !== HEADER_BYTES + length) {
    return undefined;
  }
  return body.subarray(HEADER_BYTES);
}

/** The bytes already read, then the rest of the request. */
async function* replay(
  chunks: readonly Buffer[],
  rest: NodeServerRequest | undefined,
): AsyncIterable<Uint8Array> {
  yield* chunks;
  if (rest !== undefined) {
    for await (const chunk of rest) {
      yield chunk as Uint8Array;
    }
  }
}

function answer(res: NodeServerResponse, method: DescMethod, result: UnaryResult): void {
  if (isCallOver(res)) {
    return;
  }
  const bytes = toBinary(method.output, result.message);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + bytes.length);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, HEADER_BYTES);
  res.writeHead(200, nodeHeaders(result.header, { "content-type": contentTypeProto }));
  res.addTrailers(nodeHeaders(setTrailerStatus(new Headers(result.trailer), undefined)));
  res.end(frame);
}

/** As Connect: status 200, the headers, no message, and the error in the trailers. */
function answerError(res: NodeServerResponse, reason: unknown): void {
  if (isCallOver(res)) {
    return;
  }
  const error =
    reason instanceof ConnectError
      ? reason
      : new ConnectError("internal error", Code.Internal, undefined, undefined, reason);
  res.writeHead(200, { "content-type": contentTypeProto });
  res.addTrailers(nodeHeaders(setTrailerStatus(new Headers(), error)));
  res.end();
}

/** Request headers as Connect gives them to interceptors: without HTTP/2 pseudo-headers. */
function webHeaders(headers: NodeServerRequest["headers"]): Headers {
  const header = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) {
      continue;
    }
    if (Array.isArray(value)) {
      for (const v of value) {
        header.append(name, v);
      }
    } else {
      header.append(name, String(value));
    }
  }
  return header;
}

function nodeHeaders(header: Headers, base: Record<string, string> = {}): Record<string, string> {
  const out = { ...base };
  header.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}
