import { fromBinary, type JsonValue, type Message, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createContextValues,
} from "@connectrpc/connect";
import { createAsyncIterable, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import {
  type ConnectNodeAdapterOptions,
  universalRequestFromNodeRequest,
} from "@connectrpc/connect-node";
import { isJsonMediaType } from "./media-type.js";
import { BodyTooLargeError, readBody } from "./read-body.js";
import { transcodeRequest } from "./request-transcoder.js";
import { transcodeResponse } from "./response-transcoder.js";
import { restCallKey } from "./rest-call.js";
import { invalidArgument, RestError, statusJson } from "./rest-error.js";
import type { RestRoute } from "./rest-route.js";
import { createRouteTable, type RouteEntry } from "./route-table.js";

type NodeHandler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
/** Node request of the http or http2 module, as connect-node accepts it. */
export type NodeRequest = Parameters<NodeHandler>[0];
/** Node response of the http or http2 module, as connect-node accepts it. */
export type NodeResponse = Parameters<NodeHandler>[1];

export interface RestGatewayOptions {
  /**
   * Router with the services registered (`createConnectRouter()`, then
   * `.service(...)`). Its handlers serve the REST routes, so interceptors
   * and validation are the same as for Connect and gRPC calls.
   */
  router: ConnectRouter;
  /** Largest request body accepted, in bytes; a larger one is a 413. Default 65536 (64 KiB). */
  maxBodyBytes?: number;
  /**
   * Context values for the handlers, like `connectNodeAdapter`'s option of
   * the same name. Default: none.
   */
  contextValues?: (req: NodeRequest) => ContextValues;
  /**
   * Called with errors the gateway did not expect (bugs); the client only
   * gets a 500 "internal error". Default: none.
   */
  onInternalError?: (error: unknown) => void;
}

export interface RestGateway {
  /** The routes served, most specific first (e.g. to generate OpenAPI). */
  readonly routes: readonly RestRoute[];
  /** Node request listener for HTTP/1.1 and HTTP/2; use it as connectNodeAdapter's `fallback`. */
  handle(req: NodeRequest, res: NodeResponse): void;
}

const defaultMaxBodyBytes = 64 * 1024;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A REST gateway driven by the `google.api.http` rules of the router's
 * methods. Each request is transcoded into the request message and served
 * by the method's Connect handler (as a Connect unary call in binary), and
 * the response or error is transcoded back to JSON. Errors are
 * google.rpc.Status JSON: `{"code": <gRPC code>, "message": "...", "details": []}`.
 *
 * Throws at start-up when a rule cannot be served.
 */
export function createRestGateway(opts: RestGatewayOptions): RestGateway {
  const maxBodyBytes = opts.maxBodyBytes ?? defaultMaxBodyBytes;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new Error(`maxBodyBytes must be a non-negative integer, got ${maxBodyBytes}`);
  }
  const table = createRouteTable(opts.router.handlers);

  async function serve(req: NodeRequest, res: NodeResponse): Promise<void> {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const rawPath = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? "";
    const match = table.match(method, rawPath);
    if (match.kind === "not-found") {
      throw new RestError(Code.NotFound, "no such resource", { httpStatus: 404 });
    }
    if (match.kind === "method-not-allowed") {
      throw new RestError(Code.Unimplemented, `method ${method} is not allowed here`, {
        httpStatus: 405,
        headers: { allow: match.allow.join(", ") },
      });
    }
    const { entry, variables } = match;
    const body =
      entry.route.body.kind === "none" ? undefined : await readJsonBody(req, maxBodyBytes);
    const input = transcodeRequest(entry.route, {
      body,
      variables,
      query: new URLSearchParams(q < 0 ? "" : url.slice(q + 1)),
    });
    const { output, header } = await callHandler(entry, input, req, res, opts.contextValues);
    send(res, entry.route.successStatus, header, transcodeResponse(entry.route, output));
  }

  return {
    routes: table.entries.map((e) => e.route),
    handle(req, res) {
      serve(req, res).catch((err: unknown) => {
        if (err instanceof RestError) {
          sendError(res, err.httpStatus, err.code, err.message, err.headers);
          return;
        }
        opts.onInternalError?.(err);
        sendError(res, 500, Code.Internal, "internal error", {});
      });
    },
  };
}

async function readJsonBody(req: NodeRequest, maxBodyBytes: number): Promise<JsonValue> {
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
  if (declared > maxBodyBytes) {
    // Discard the body unread; the answer does not depend on it.
    req.resume();
    throw tooLarge();
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBody(req, maxBodyBytes);
  } catch (e) {
    if (e instanceof BodyTooLargeError) {
      throw tooLarge();
    }
    // The client went away; there is no one left to answer.
    throw new RestError(Code.Canceled, "request body was not received completely");
  }
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

// Request headers the Connect protocol reads itself, or that describe the
// REST request's body rather than the call.
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

// Response headers of the Connect call that do not describe the REST response.
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

async function callHandler(
  { route, handler }: RouteEntry,
  input: Message,
  req: NodeRequest,
  res: NodeResponse,
  contextValues: RestGatewayOptions["contextValues"],
): Promise<{ output: Message; header: Headers }> {
  let universal: UniversalServerRequest;
  try {
    const values = contextValues?.(req) ?? createContextValues();
    values.set(restCallKey, true);
    // The body was read already: a parsed body (null) keeps connect-node from
    // wrapping the request stream in an async iterable nobody reads.
    universal = universalRequestFromNodeRequest(req, res, null, values);
  } catch (e) {
    // Only thrown for a request without Host / :authority.
    throw e instanceof ConnectError ? invalidArgument(e.rawMessage) : e;
  }
  const header = new Headers();
  universal.header.forEach((value, name) => {
    if (!droppedRequestHeaders.has(name) && !isProtocolHeader(name)) {
      header.set(name, value);
    }
  });
  header.set("content-type", "application/proto");
  header.set("connect-protocol-version", "1");
  const response = await handler({
    httpVersion: universal.httpVersion,
    method: "POST",
    url: originOf(universal.url) + handler.requestPath,
    header,
    body: createAsyncIterable([toBinary(route.method.input, input)]),
    signal: universal.signal,
    contextValues: universal.contextValues,
  });
  const bytes = await readAll(response.body);
  const responseHeader = new Headers();
  response.header?.forEach((value, name) => {
    if (!droppedResponseHeaders.has(name) && !isProtocolHeader(name)) {
      responseHeader.set(name, value);
    }
  });
  if (response.status === 200) {
    return { output: fromBinary(route.method.output, bytes), header: responseHeader };
  }
  const error = errorFromJsonBytes(
    bytes,
    undefined,
    new ConnectError("internal error", Code.Internal),
  );
  // The handler's message is meant for clients; Connect already replaced the
  // text of unexpected exceptions with "internal error".
  throw new RestError(error.code, error.rawMessage, {
    headers: Object.fromEntries(responseHeader),
  });
}

/** `http://host:port` of an absolute URL as connect-node builds it (a path always follows). */
function originOf(url: string): string {
  const path = url.indexOf("/", url.indexOf("//") + 2);
  return path < 0 ? url : url.slice(0, path);
}

async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body ?? []) {
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function send(res: NodeResponse, status: number, header: Headers, json: JsonValue): void {
  const headers = Object.fromEntries(header);
  if (status === 204 || status === 205) {
    writeResponse(res, status, headers, undefined);
    return;
  }
  writeResponse(res, status, headers, JSON.stringify(json));
}

function sendError(
  res: NodeResponse,
  status: number,
  code: Code,
  message: string,
  headers: Readonly<Record<string, string>>,
): void {
  writeResponse(res, status, { ...headers }, statusJson(code, message));
}

function writeResponse(
  res: NodeResponse,
  status: number,
  headers: Record<string, string>,
  body: string | undefined,
): void {
  // The client may be gone, or an error may come after the answer started.
  if (res.headersSent || res.writableEnded || res.destroyed) {
    return;
  }
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const bytes = Buffer.from(body, "utf8");
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(bytes.byteLength),
  });
  res.end(bytes);
}
