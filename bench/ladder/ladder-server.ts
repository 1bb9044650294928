// One rung of a ladder (bench/ladder/README in bench/README.md): a server of
// one path (`--path`) with the layers of its steps 0..`--step` switched on
// (bench/ladder/ladder-steps.ts), each layer the service's own module
// (logger, metrics, request id, store, verifier, validator, gen schemas,
// Connect with the service's interceptors), so that the step's delta prices
// the real layer. One process, like the service at WORKERS=1.
//
// Started by bench/ladder/run-ladder.ts as the bench starts the floors
// (prints the same "listening" line; publicPort = internalPort); env: REDIS_URL,
// LADDER_KEYS_FILE (create paths: JSON object user id → public key hex).
// Log lines go to stdout, which the bench points at a file, as for the service.
import { hash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import {
  createServer as createH2cServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import {
  create,
  type DescMessage,
  fromBinary,
  fromJsonString,
  type Message,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  IntrospectTokenRequestSchema,
  IntrospectTokenResponseSchema,
  TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import {
  type CreateTokenRequest,
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
  TokenService,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  createTokenMessage,
  generateToken,
  parseToken,
  tokenDigest,
  tokenIdOf,
} from "@perps/token-client/protocol";
import { createEd25519Verifier } from "../../src/crypto/ed25519-verifier.js";
import { requestPath } from "../../src/http/request-path.js";
import { createLogger } from "../../src/log/logger.js";
import { createRequestLineWriter } from "../../src/log/request-line.js";
import {
  createRequestSeries,
  createServiceMetrics,
  observeRedis,
} from "../../src/metrics/service-metrics.js";
import { createRedisClient, waitForRedisReady } from "../../src/redis/redis-client.js";
import { callOutcomeInterceptor } from "../../src/server/interceptor-chain.js";
import { requestIdInterceptor, settleRequestId } from "../../src/server/request-id.js";
import { redisKeysOf } from "../../src/store/keys.js";
import { createRedisRunner } from "../../src/store/redis-runner.js";
import { createTokenRecordCache } from "../../src/store/token-record-cache.js";
import { createTokenStore } from "../../src/store/token-store.js";
import { createBearerAuthenticator } from "../../src/token/bearer-authenticator.js";
import { bearerTokenOf } from "../../src/token/bearer-header.js";
import { clientErrorOf } from "../../src/token/client-error.js";
import { expiresAtMs, utcDate } from "../../src/token/expiry-date.js";
import { checkCreateRequest, checkTimeWindow } from "../../src/token/request-rules.js";
import { createPublicKeyCache } from "../../src/token/signature-authenticator.js";
import {
  createTokenIntrospectionService,
  introspectionAnswer,
} from "../../src/token/token-introspection-service.js";
import { createTokenService } from "../../src/token/token-service.js";
import {
  createRequestValidator,
  validationInterceptor,
} from "../../src/validation/validation-interceptor.js";
import { STORE_SETTINGS } from "../../test/support/store-settings.js";
import { listenAsFloor } from "../shared-listen.js";
import { isLadderPath, LADDER_STEPS, type LadderLayer } from "./ladder-steps.js";

const argOf = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const path = argOf("path") ?? "";
const stepIndex = Number(argOf("step") ?? "0");
if (!isLadderPath(path)) {
  throw new Error(`--path must be one of the ladder's paths, got "${path}"`);
}
const steps = LADDER_STEPS[path];
if (!Number.isInteger(stepIndex) || stepIndex < 0 || stepIndex >= steps.length) {
  throw new Error(`--step must be 0..${steps.length - 1}`);
}
/** Whether the layer is on: it is one of this path's steps at or below `--step`. */
const on = (layer: LadderLayer): boolean => {
  const at = steps.findIndex((s) => s.layer === layer);
  return at >= 0 && at <= stepIndex;
};
if (on("service")) {
  throw new Error("the service step runs the service itself, not this server");
}
const { REDIS_URL, LADDER_KEYS_FILE, LADDER_LOOKUP = "redis" } = process.env;
if (LADDER_LOOKUP !== "redis" && LADDER_LOOKUP !== "memory") {
  throw new Error(`LADDER_LOOKUP must be redis or memory, got "${LADDER_LOOKUP}"`);
}
/** Checks answered from memory once a token was read: the floor remembers, the store step caches. */
const fromMemory = LADDER_LOOKUP === "memory";
if (REDIS_URL === undefined) {
  throw new Error("REDIS_URL is required");
}
const knownKeys = new Map<string, string>(
  LADDER_KEYS_FILE === undefined
    ? []
    : Object.entries(JSON.parse(readFileSync(LADDER_KEYS_FILE, "utf8")) as Record<string, string>),
);

// The service's own modules, built as src/process/run-service.ts builds them.
const redis = createRedisClient({ topology: { kind: "url", url: REDIS_URL } });
const metrics = createServiceMetrics();
const seriesOf = createRequestSeries(metrics);
const logger = createLogger().child({}, { redact: [] });
const requestLine = createRequestLineWriter(logger);
const store = createTokenStore({
  ...STORE_SETTINGS,
  redis: { client: redis },
  ...(fromMemory
    ? {
        cache: createTokenRecordCache({
          redis: { client: redis },
          maxEntries: 100_000,
          graceMs: 0,
        }),
      }
    : {}),
  rateLimitPerMinute: 1_000_000,
  maxActivePerUser: 1_000_000,
  ...(on("metrics") ? { runRedis: createRedisRunner({ observe: observeRedis(metrics) }) } : {}),
});
const authenticator = createBearerAuthenticator({ store });
const verifier = createEd25519Verifier();
const validator = createRequestValidator();
const publicKeyCache = createPublicKeyCache(10_000);
const MAX_LIFETIME_SECONDS = 2_592_000;

/** The life of one request in one plain object of a stable shape. */
interface Call {
  requestId: string;
  started: number;
  method: string;
  protocol: string;
  code: string;
}

/** An answer before it is written: gRPC status (or HTTP status) and body. */
interface Answer {
  status: number;
  body: Uint8Array;
  headers: Record<string, string>;
  /** For the log: "ok" or the code's name. */
  code: string;
}

const newCall = (headers: IncomingHttpHeaders, method: string, protocol: string): Call => ({
  requestId: on("request-id") ? settleRequestId(headers["x-request-id"]) : "",
  started: performance.now(),
  method,
  protocol,
  code: "ok",
});

/** The log line and the metrics of an answered call, written once. */
function tell(call: Call): void {
  const seconds = (performance.now() - call.started) / 1000;
  if (on("metrics")) {
    const series = seriesOf(call.method, call.protocol);
    series.duration.observe(seconds);
    series.calls(call.code).inc();
  }
  if (on("log-line")) {
    requestLine({
      method: call.method,
      protocol: call.protocol,
      requestId: call.requestId,
      code: call.code,
      ms: Math.round(seconds * 1000),
    });
  }
}

/** WHATWG Headers of a request, as Connect's universal request builds them. */
function requestHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) {
      continue;
    }
    for (const v of Array.isArray(value) ? value : [value]) {
      out.append(name, v);
    }
  }
  return out;
}

/** The answer's headers as a plain object, through a WHATWG Headers when that layer is on. */
function answerHeaders(call: Call, base: Record<string, string>): Record<string, string> {
  const withId = on("request-id") ? { ...base, "x-request-id": call.requestId } : base;
  if (!on("headers")) {
    return withId;
  }
  const headers = new Headers(withId);
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

const FOUND = Buffer.of(0x08, 0x01);
const EMPTY = new Uint8Array(0);
const grpcOk = (body: Uint8Array): Answer => ({ status: 0, body, headers: {}, code: "ok" });
const codeNameOf = (code: Code): string => Code[code] ?? "Unknown";
function grpcError(err: unknown): Answer {
  const error = on("async-errors") ? clientErrorOf(err) : ConnectError.from(err);
  return { status: error.code, body: EMPTY, headers: {}, code: codeNameOf(error.code) };
}

// ——— the work of each path, after transport and before the answer is written

async function introspectAsync(body: Buffer): Promise<Uint8Array> {
  return introspect(body);
}

function introspect(body: Buffer): Promise<Uint8Array> {
  let token: string;
  if (on("protobuf")) {
    const request = fromBinary(IntrospectTokenRequestSchema, body);
    if (on("validation")) {
      problemsOrThrow(IntrospectTokenRequestSchema, request);
    }
    token = request.token;
  } else {
    // Field 1's tag (0x0a) and a one-byte length: tokens are short.
    token = body[0] === 0x0a ? body.toString("latin1", 2, 2 + (body[1] ?? 0)) : "";
  }
  if (!on("store")) {
    return byTokenRecord(token, FOUND, EMPTY);
  }
  return authenticator.authenticate(token).then((identity) => {
    if (!on("protobuf")) {
      return identity === undefined ? EMPTY : FOUND;
    }
    return toBinary(IntrospectTokenResponseSchema, introspectionAnswer(identity));
  });
}

// What the floor learnt of each token key (LADDER_LOOKUP=memory): never forgotten, as no cache may.
const remembered = new Map<string, boolean>();

// Below the store step: `live` if the token's record is in Redis (one GET, no script), else `dead`;
// from memory, one GET per token ever.
function byTokenRecord<T>(token: string, live: T, dead: T): Promise<T> {
  const parsed = parseToken(token);
  if (parsed === undefined) {
    return Promise.resolve(dead);
  }
  const key = redisKeysOf(parsed.userId).token(parsed.tokenId);
  const known = fromMemory ? remembered.get(key) : undefined;
  if (known !== undefined) {
    return Promise.resolve(known ? live : dead);
  }
  return redis.getBuffer(key).then((r) => {
    if (fromMemory) {
      remembered.set(key, r !== null);
    }
    return r === null ? dead : live;
  });
}

function problemsOrThrow(schema: DescMessage, message: Message): void {
  const problems = validator.problems(schema, message);
  if (problems.length > 0) {
    throw new ConnectError(problems.join("; "), Code.InvalidArgument);
  }
}

interface Created {
  id: string;
  token: string;
  expiresAt: string;
}

async function signerPublicKeyOf(userId: string, message: Uint8Array, signature: Uint8Array) {
  if (!on("key-cache")) {
    const key = knownKeys.get(userId);
    return key !== undefined && verifier.verify(key, message, signature) ? key : undefined;
  }
  let keys = publicKeyCache.get(userId);
  if (keys === undefined) {
    keys = await store.publicKeys(userId);
    publicKeyCache.set(userId, keys);
  }
  return keys.find((key) => verifier.verify(key, message, signature));
}

/** A create, from the request's fields to the stored token. */
async function createToken(request: CreateTokenRequest): Promise<Created> {
  let timestamp = request.timestamp ?? 0n;
  let lifetimeSeconds = Number(request.expiresIn ?? 604_800n);
  let signature: Uint8Array = Buffer.from(request.signature, "hex");
  const nowMs = Date.now();
  if (on("rules")) {
    const checked = checkCreateRequest(request, { maxLifetimeSeconds: MAX_LIFETIME_SECONDS });
    checkTimeWindow(checked.timestamp, nowMs);
    timestamp = checked.timestamp;
    lifetimeSeconds = checked.lifetimeSeconds;
    signature = checked.signature;
  }
  const userId = request.userId;
  const message = createTokenMessage({
    timestamp,
    userId: request.userId,
    expiresIn: request.expiresIn,
    name: request.name,
  });
  const signerPublicKey = await signerPublicKeyOf(userId, message, signature);
  if (signerPublicKey === undefined) {
    throw new ConnectError("Invalid signature", Code.Unauthenticated);
  }
  const messageDigest = hash("sha256", message, "buffer");
  const id = tokenIdOf(messageDigest);
  const token = generateToken(userId, id);
  const expiresAt = expiresAtMs(nowMs, lifetimeSeconds);
  const outcome = await store.create({
    userId,
    signerPublicKey,
    messageDigest,
    tokenId: id,
    tokenDigest: tokenDigest(token),
    name: request.name,
    expiresAtMs: expiresAt,
  });
  if (outcome.kind !== "created") {
    throw new ConnectError(outcome.kind, Code.FailedPrecondition);
  }
  return { id, token, expiresAt: utcDate(expiresAt) };
}

function grpcCreate(body: Buffer): Promise<Uint8Array> {
  const request = fromBinary(CreateTokenRequestSchema, body);
  if (on("validation")) {
    problemsOrThrow(CreateTokenRequestSchema, request);
  }
  return createToken(request).then((created) =>
    toBinary(CreateTokenResponseSchema, create(CreateTokenResponseSchema, created)),
  );
}

async function grpcCreateAsync(body: Buffer): Promise<Uint8Array> {
  return grpcCreate(body);
}

interface RestCreateBody {
  userId: string;
  timestamp: number;
  expiresIn?: number;
  name?: string;
  signature: string;
}

function restCreate(text: string): Promise<string> {
  let request: CreateTokenRequest;
  if (on("json-protobuf")) {
    request = fromJsonString(CreateTokenRequestSchema, text);
    if (on("validation")) {
      problemsOrThrow(CreateTokenRequestSchema, request);
    }
  } else {
    const body = JSON.parse(text) as RestCreateBody;
    request = create(CreateTokenRequestSchema, {
      userId: body.userId,
      timestamp: BigInt(body.timestamp),
      signature: body.signature,
      ...(body.expiresIn === undefined ? {} : { expiresIn: BigInt(body.expiresIn) }),
      ...(body.name === undefined ? {} : { name: body.name }),
    });
  }
  return createToken(request).then((created) =>
    on("json-protobuf")
      ? toJsonString(CreateTokenResponseSchema, create(CreateTokenResponseSchema, created))
      : JSON.stringify(created),
  );
}

async function restCreateAsync(text: string): Promise<string> {
  return restCreate(text);
}

// ——— gRPC over h2c: the raw stream, the compat API, or Connect's adapter

const INTROSPECT = `/${TokenIntrospectionService.typeName}/IntrospectToken`;
const CREATE = `/${TokenService.typeName}/CreateToken`;
const grpcWork: (body: Buffer) => Promise<Uint8Array> =
  path === "introspect"
    ? on("async-errors")
      ? introspectAsync
      : introspect
    : on("async-errors")
      ? grpcCreateAsync
      : grpcCreate;
const grpcRoutes = new Map([[path === "introspect" ? INTROSPECT : CREATE, grpcWork]]);
const grpcMethodName = (path === "introspect" ? INTROSPECT : CREATE).slice(1);

/** The gRPC route of a request, or an UNIMPLEMENTED-like refusal. */
function grpcRouteOf(headers: IncomingHttpHeaders) {
  if (!on("routing")) {
    return grpcWork;
  }
  const contentType = headers["content-type"];
  if (headers[":method"] !== "POST" || !contentType?.startsWith("application/grpc")) {
    return undefined;
  }
  return grpcRoutes.get(headers[":path"] ?? "");
}

/** The message of a unary request's body: the envelope's payload. */
const unenvelope = (body: Buffer): Buffer => body.subarray(5, 5 + body.readUInt32BE(1));

function envelope(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.byteLength);
  frame[0] = 0;
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

function answerGrpc(
  body: Buffer,
  headers: IncomingHttpHeaders,
  write: (answer: Answer) => void,
): void {
  if (on("headers")) {
    requestHeaders(headers);
  }
  const route = grpcRouteOf(headers);
  if (route === undefined) {
    write({ status: Code.Unimplemented, body: EMPTY, headers: {}, code: "Unimplemented" });
    return;
  }
  let work: Promise<Uint8Array>;
  try {
    work = route(unenvelope(body));
  } catch (err) {
    write(grpcError(err));
    return;
  }
  work.then(
    (message) => write(grpcOk(message)),
    (err: unknown) => write(grpcError(err)),
  );
}

function onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  const call = newCall(headers, grpcMethodName, "grpc");
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("error", () => {});
  if (on("close-listener")) {
    stream.once("close", () => tell(call));
  }
  stream.on("end", () => {
    answerGrpc(Buffer.concat(chunks), headers, (answer) => {
      call.code = answer.code;
      if (stream.destroyed) {
        return;
      }
      const base = answerHeaders(call, { "content-type": "application/grpc" });
      const status = String(answer.status);
      if (on("trailers")) {
        stream.respond({ ":status": 200, ...base }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": status }));
      } else {
        stream.respond({ ":status": 200, ...base, "grpc-status": status });
      }
      stream.end(envelope(answer.body));
      if (!on("close-listener")) {
        tell(call);
      }
    });
  });
}

function onCompatRequest(req: Http2ServerRequest, res: Http2ServerResponse): void {
  const call = newCall(req.headers, grpcMethodName, "grpc");
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  res.once("close", () => tell(call));
  req.on("end", () => {
    answerGrpc(Buffer.concat(chunks), req.headers, (answer) => {
      call.code = answer.code;
      if (res.destroyed) {
        return;
      }
      res.writeHead(200, answerHeaders(call, { "content-type": "application/grpc" }));
      res.addTrailers({ "grpc-status": String(answer.status) });
      res.end(envelope(answer.body));
    });
  });
}

/** Connect's adapter with the service's interceptors and implementation, inside our telemetry. */
function connectHandler() {
  const routes = (router: ConnectRouter) => {
    if (path === "introspect") {
      router.service(TokenIntrospectionService, createTokenIntrospectionService({ authenticator }));
    } else {
      router.service(
        TokenService,
        createTokenService({ store, verifier, maxLifetimeSeconds: MAX_LIFETIME_SECONDS }),
      );
    }
  };
  const adapter = connectNodeAdapter({
    routes,
    interceptors: [requestIdInterceptor(), callOutcomeInterceptor(), validationInterceptor()],
  });
  return (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const call = newCall(req.headers, grpcMethodName, "grpc");
    res.setHeader("x-request-id", call.requestId);
    res.once("close", () => {
      const status = res.getHeader("grpc-status");
      call.code = status === undefined || status === "0" ? "ok" : String(status);
      tell(call);
    });
    adapter(req, res);
  };
}

// ——— HTTP/1.1: forward-auth and REST create

const REFUSED: Answer = { status: 401, body: EMPTY, headers: {}, code: "Unauthenticated" };
const ALLOWED: Answer = { status: 200, body: EMPTY, headers: {}, code: "ok" };

function authWork(token: string): Promise<Answer> {
  if (!on("store")) {
    return byTokenRecord(token, ALLOWED, REFUSED);
  }
  return authenticator.authenticate(token).then(
    (identity): Answer =>
      identity === undefined
        ? REFUSED
        : {
            status: 200,
            body: EMPTY,
            headers: {
              "x-user-id": identity.userId,
              "x-token-id": identity.tokenId,
              "cache-control": "no-store",
            },
            code: "ok",
          },
  );
}

async function authWorkAsync(token: string): Promise<Answer> {
  return authWork(token);
}

function httpError(err: unknown): Answer {
  const error = on("async-errors") ? clientErrorOf(err) : ConnectError.from(err);
  const status =
    error.code === Code.InvalidArgument ? 400 : error.code === Code.Unavailable ? 503 : 401;
  return {
    status,
    body: Buffer.from(JSON.stringify({ code: codeNameOf(error.code), message: error.rawMessage })),
    headers: { "content-type": "application/json" },
    code: codeNameOf(error.code),
  };
}

function onHttpRequest(req: IncomingMessage, res: ServerResponse): void {
  const call = newCall(
    req.headers,
    path === "forward-auth" ? "forward-auth" : CREATE.slice(1),
    path === "forward-auth" ? "http" : "rest",
  );
  if (on("close-listener")) {
    res.once("close", () => tell(call));
  }
  if (on("headers")) {
    requestHeaders(req.headers);
  }
  const write = (answer: Answer) => {
    call.code = answer.code;
    const headers = answerHeaders(call, {
      ...answer.headers,
      "content-length": String(answer.body.byteLength),
    });
    res.writeHead(answer.status, headers);
    res.end(answer.body);
    if (!on("close-listener")) {
      tell(call);
    }
  };
  const settle = (work: () => Promise<Answer>) => {
    let answer: Promise<Answer>;
    try {
      answer = work();
    } catch (err) {
      write(httpError(err));
      return;
    }
    answer.then(write, (err: unknown) => write(httpError(err)));
  };
  if (path === "forward-auth") {
    if (on("routing")) {
      const at = requestPath(req);
      if (at !== "/auth" && !at.startsWith("/auth/")) {
        write({ status: 404, body: EMPTY, headers: {}, code: "NotFound" });
        return;
      }
    }
    const token = on("routing")
      ? (bearerTokenOf(req.headers.authorization) ?? "")
      : (req.headers.authorization?.slice("Bearer ".length) ?? "");
    settle(() => (on("async-errors") ? authWorkAsync(token) : authWork(token)));
    return;
  }
  if (on("routing") && (req.method !== "POST" || requestPath(req) !== "/user/tokens")) {
    write({ status: 404, body: EMPTY, headers: {}, code: "NotFound" });
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    settle(() =>
      (on("async-errors") ? restCreateAsync(text) : restCreate(text)).then((json) => ({
        status: 201,
        body: Buffer.from(json),
        headers: { "content-type": "application/json" },
        code: "ok",
      })),
    );
  });
}

// ——— the listener

const grpcPath = path === "introspect" || path === "grpc-create";
const settings = { settings: { maxConcurrentStreams: 100 } };
const server = !grpcPath
  ? createHttpServer({ keepAliveTimeout: 60_000 }, onHttpRequest)
  : on("connect")
    ? createH2cServer(settings, connectHandler())
    : on("compat")
      ? createH2cServer(settings, onCompatRequest)
      : createH2cServer(settings).on("stream", onStream);
// Ready before listening, as the service is: its client fails commands while it connects.
await waitForRedisReady(redis, 10_000);
// The bench runs a floor as many processes as the service has workers, on one port.
await listenAsFloor(server, () => {
  redis.disconnect();
  // Open keep-alive connections and HTTP/2 sessions would keep the process alive.
  logger.flush();
  process.exit(0);
});
