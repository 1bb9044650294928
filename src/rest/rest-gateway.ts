// The REST gateway, request to answer: a request matched to its route, its
// JSON body read (application/json only), the request message transcoded
// (request-transcoder.ts), the call made through the listener's invoker, and
// the response message written back as JSON; every refusal and error is a
// google.rpc.Status answer.

import {
  create,
  type DescMessage,
  type DescMethod,
  type JsonValue,
  type Message,
  toJson,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import { NO_SUCH_RESOURCE } from "@perps/token-client/protocol";
import { lazyCallSignal } from "../call/call-signal.js";
import type { UnaryInvoker, UnaryResult } from "../call/unary-invoker.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { joined, readNoMore, readRequestBody } from "../http/request-body.js";
import { requestPath } from "../http/request-path.js";
import { requestAuthority, requestUrl } from "../http/request-url.js";
import { nodeHeaders, webHeaders } from "../http/web-headers.js";
import { errorDetailsJson } from "../status/error-details.js";
import { writeStatusAnswer } from "../status/status-answer.js";
import { transcodeRequest } from "./request-transcoder.js";
import { invalidArgument, RestError } from "./rest-error.js";
import type { RestRoute } from "./rest-route.js";
import { createRouteTable, type RouteTable } from "./route-table.js";

export interface RestGatewayOptions {
  /** The services whose `google.api.http` rules are served. */
  services: readonly ServiceImplSpec[];
  /**
   * The way into a call: the listener's one invoker, which its Connect,
   * gRPC and gRPC-Web calls go through too, so that a REST call is seen by
   * the interceptors and the implementations exactly like them.
   */
  invoker: UnaryInvoker;
  /**
   * The routes of `services`, when another endpoint (CORS) matches requests
   * against the same table: each request is then matched once. Default: made
   * from `services`.
   */
  routes?: RouteTable;
  /** Largest request body accepted, in bytes; a larger one is a 413. Default 65536 (64 KiB). */
  maxBodyBytes?: number;
  /**
   * Context values for the handlers, like `connectNodeAdapter`'s option of
   * the same name. Default: none.
   */
  contextValues?: (req: NodeServerRequest) => ContextValues;
  /**
   * Called with errors the gateway did not expect (bugs); the client only
   * gets a 500 "internal error". Default: none.
   */
  onInternalError?: (error: unknown) => void;
  /**
   * Called with each error answer the interceptors did not see, just before
   * it is sent: the gateway's own refusals (unknown path, 405, 413, 415, a
   * body that does not fit the request message) and its failures. A call's
   * own error is the interceptors' to tell. Default: none.
   */
  onErrorAnswer?: (req: NodeServerRequest, answer: RestErrorAnswer) => void;
  /**
   * Called when a request matches a route, before its body is read: a call
   * whose client goes away mid-body is still known by its method. Default: none.
   */
  onRoute?: (req: NodeServerRequest, method: DescMethod) => void;
}

/** An error answer of the gateway. */
export interface RestErrorAnswer {
  readonly code: Code;
  readonly message: string;
  /** The method of the route the request matched; undefined when it matched none. */
  readonly method: DescMethod | undefined;
}

export interface RestGateway {
  /** The routes served, most specific first (e.g. to generate OpenAPI). */
  readonly routes: readonly RestRoute[];
  /** Node request listener for HTTP/1.1 and HTTP/2; use it as connectNodeAdapter's `fallback`. */
  handle(req: NodeServerRequest, res: NodeServerResponse): void;
}

const defaultMaxBodyBytes = 64 * 1024;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A REST gateway driven by the `google.api.http` rules of the services'
 * methods. Each request is transcoded into the request message, handed to
 * the method's implementation through the interceptors (no wire format in
 * between), and the response or error is transcoded back to JSON. Errors are
 * google.rpc.Status JSON: `{"code": <gRPC code>, "message": "...", "details": [...]}`,
 * the details being the ConnectError's, as protojson Any (error-details.ts).
 *
 * Throws at start-up when a rule cannot be served.
 */
export function createRestGateway(opts: RestGatewayOptions): RestGateway {
  const maxBodyBytes = opts.maxBodyBytes ?? defaultMaxBodyBytes;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new Error(`maxBodyBytes must be a non-negative integer, got ${maxBodyBytes}`);
  }
  const table = opts.routes ?? createRouteTable(opts.services.flatMap((s) => s.service.methods));
  const { invoker } = opts;

  async function serve(req: NodeServerRequest, res: NodeServerResponse): Promise<void> {
    let method: DescMethod | undefined;
    try {
      const rawPath = requestPath(req);
      const httpMethod = req.method ?? "";
      const match = table.matchRequest(req);
      if (match.kind === "not-found") {
        throw new RestError(Code.NotFound, NO_SUCH_RESOURCE, { httpStatus: 404 });
      }
      if (match.kind === "method-not-allowed") {
        throw new RestError(Code.Unimplemented, `method ${httpMethod} is not allowed here`, {
          httpStatus: 405,
          headers: { allow: match.allow.join(", ") },
        });
      }
      const { route, variables } = match;
      method = route.method;
      opts.onRoute?.(req, method);
      const body = route.body.kind === "none" ? undefined : await readJsonBody(req, maxBodyBytes);
      const input = transcodeRequest(route, {
        body,
        variables,
        query: new URLSearchParams((req.url ?? "").slice(rawPath.length + 1)),
      });
      const output = await callMethod(invoker, route, input, req, res, opts.contextValues);
      send(res, route.successStatus, output.header, transcodeResponse(route, output.message));
    } catch (err) {
      let error: RestError;
      if (err instanceof RestError) {
        error = err;
      } else {
        opts.onInternalError?.(err);
        error = new RestError(Code.Internal, "internal error", { httpStatus: 500 });
      }
      if (!error.ofCall) {
        opts.onErrorAnswer?.(req, { code: error.code, message: error.message, method });
      }
      if (!isAnswered(res)) {
        writeStatusAnswer(res, {
          status: error.httpStatus,
          code: error.code,
          message: error.message,
          details: error.details,
          headers: error.headers,
        });
        // A refusal before the body ended (413): none of the rest is read.
        if (!req.readableEnded) {
          readNoMore(req, false);
        }
      }
    }
  }

  // Only a bug in an answer hook gets here.
  const failed = (err: unknown) => opts.onInternalError?.(err);

  return {
    routes: table.routes,
    handle(req, res) {
      serve(req, res).catch(failed);
    },
  };
}

async function readJsonBody(req: NodeServerRequest, maxBodyBytes: number): Promise<JsonValue> {
  if (!isJsonMediaType(req.headers["content-type"])) {
    throw new RestError(Code.InvalidArgument, "content-type must be application/json", {
      httpStatus: 415,
    });
  }
  const tooLarge = () =>
    new RestError(Code.InvalidArgument, `request body is larger than ${maxBodyBytes} bytes`, {
      httpStatus: 413,
    });
  const declared = Number(req.headers["content-length"] ?? 0);
  // Over the limit, the answer does not wait for the rest, nor reads it (readNoMore).
  if (declared > maxBodyBytes) {
    throw tooLarge();
  }
  // A body cut short (the client went away) leaves this pending: nobody is left to answer.
  const body = await readRequestBody(req, maxBodyBytes);
  if (!body.ended) {
    throw tooLarge();
  }
  const bytes = joined(body);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidArgument("request body is not valid UTF-8");
  }
  try {
    // JSON.parse keeps "__proto__" as an own key and the last of duplicate
    // keys; the value is only read, never merged into other objects.
    return JSON.parse(text) as JsonValue;
  } catch {
    throw invalidArgument("request body is not valid JSON");
  }
}

/**
 * True for `application/json`, with any parameters, as long as a charset
 * parameter (if any) is UTF-8: the only encoding JSON allows (RFC 8259).
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (contentType == null) {
    return false;
  }
  const [type = "", ...params] = contentType.split(";");
  if (type.trim().toLowerCase() !== "application/json") {
    return false;
  }
  return params.every((param) => {
    const eq = param.indexOf("=");
    const name = param
      .slice(0, eq < 0 ? undefined : eq)
      .trim()
      .toLowerCase();
    if (name !== "charset") {
      return true;
    }
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
    return value === "utf-8" || value === "utf8";
  });
}

// Request headers that describe the REST request's body or connection rather
// than the call, or that the Connect protocol would read as its own.
const droppedRequestHeaders = new Set([
  "accept-encoding",
  "connection",
  "content-encoding",
  "content-length",
  "content-type",
  "expect",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

// Response headers that do not describe the REST response.
const droppedResponseHeaders = new Set([
  "connection",
  "content-encoding",
  "content-length",
  "content-type",
  "keep-alive",
  "transfer-encoding",
]);

function isProtocolHeader(name: string): boolean {
  return name.startsWith("connect-") || name.startsWith("grpc-") || name.startsWith("trailer-");
}

/** A request header the interceptors and the handler do not see. */
function isDroppedRequestHeader(name: string): boolean {
  return droppedRequestHeaders.has(name) || isProtocolHeader(name);
}

/** A header of the call's answer or error metadata that a REST response does not carry. */
function isDroppedResponseHeader(name: string): boolean {
  return droppedResponseHeaders.has(name) || isProtocolHeader(name);
}

async function callMethod(
  invoker: UnaryInvoker,
  route: RestRoute,
  input: Message,
  req: NodeServerRequest,
  res: NodeServerResponse,
  contextValues: RestGatewayOptions["contextValues"],
): Promise<{ message: Message; header: Record<string, string> }> {
  const authority = requestAuthority(req);
  if (authority === undefined || authority === "") {
    throw invalidArgument("the request has no Host header");
  }
  const values = contextValues?.(req) ?? createContextValues();
  let result: UnaryResult;
  try {
    result = await invoker.invoke(route.method, input, {
      protocolName: "rest",
      requestMethod: req.method ?? "",
      url: () => requestUrl(req),
      header: () => webHeaders(req.headers, isDroppedRequestHeader),
      contextValues: values,
      signal: lazyCallSignal(res),
    });
  } catch (e) {
    if (e instanceof ConnectError) {
      // Interceptors turn unexpected exceptions into neutral ConnectErrors, so
      // the message of one is meant for clients.
      throw new RestError(e.code, e.rawMessage, {
        headers: nodeHeaders(e.metadata, {}, isDroppedResponseHeader),
        details: errorDetailsJson(e),
        ofCall: true,
      });
    }
    throw e;
  }
  return {
    message: result.message,
    header: nodeHeaders(result.header, {}, isDroppedResponseHeader),
  };
}

/**
 * The JSON body of a successful call: the response message in protobuf JSON
 * (camelCase names, default values omitted, 64-bit integers as strings, but
 * the message's own lists and maps always present, see withEmptyCollections),
 * or only its `response_body` field.
 */
export function transcodeResponse(route: RestRoute, message: Message): JsonValue {
  const output = route.method.output;
  const field = route.responseBody;
  if (field === undefined) {
    return withEmptyCollections(output, toJson(output, message));
  }
  const value = reflect(output, message);
  if (field.fieldKind === "message") {
    const inner = value.isSet(field) ? value.get(field).message : create(field.message);
    return toJson(field.message, inner);
  }
  // A copy holding only this field, in protobuf JSON as the rest of the
  // answer (the defaults of nested messages left out); the field itself
  // always has a value: its default when unset ([] for an empty list, 0, "").
  const only = reflect(output);
  if (value.isSet(field)) {
    only.set(field, value.get(field));
  }
  return (
    fieldOf(toJson(output, only.message), field.jsonName) ??
    fieldOf(toJson(output, create(output), { alwaysEmitImplicit: true }), field.jsonName) ??
    null
  );
}

function fieldOf(json: JsonValue, name: string): JsonValue | undefined {
  return typeof json === "object" && json !== null && !Array.isArray(json) ? json[name] : undefined;
}

/**
 * Writes the response message's empty lists as `[]` and empty maps as `{}`,
 * which protobuf JSON leaves out, so that a list answer always has its list
 * (`{"tokens": []}`). Only the top level: nested messages, and scalars, keep
 * protobuf JSON's omissions.
 */
function withEmptyCollections(output: DescMessage, json: JsonValue): JsonValue {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return json;
  }
  for (const field of output.fields) {
    if (field.fieldKind === "list" && json[field.jsonName] === undefined) {
      json[field.jsonName] = [];
    } else if (field.fieldKind === "map" && json[field.jsonName] === undefined) {
      json[field.jsonName] = {};
    }
  }
  return json;
}

function send(
  res: NodeServerResponse,
  status: number,
  headers: Record<string, string>,
  json: JsonValue,
): void {
  if (status === 204 || status === 205) {
    writeResponse(res, status, headers, undefined);
    return;
  }
  writeResponse(res, status, headers, JSON.stringify(json));
}

/** The client may be gone, or an error may come after the answer started. */
function isAnswered(res: NodeServerResponse): boolean {
  return res.headersSent || res.writableEnded || res.destroyed;
}

function writeResponse(
  res: NodeServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | undefined,
): void {
  if (isAnswered(res)) {
    return;
  }
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body, "utf8")),
  });
  // A string, not bytes: node sends it in one write with the head.
  res.end(body, "utf8");
}
