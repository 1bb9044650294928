// The check lane: a live token's check answered from the token cache, read
// top to bottom, bytes in to bytes out. IntrospectToken on a raw HTTP/2
// stream (gRPC) and `GET /auth` over HTTP/1.1; whatever the lane cannot
// answer from the cache with certainty (a miss, a token not live, anything
// malformed, a refusal) goes on to the pipeline as it is, which answers it as
// it answers every call. docs/design-choices.md says why; the parity test
// (test/integration/check-lane-parity.test.ts) holds its answers to the
// pipeline's.

import { hash, timingSafeEqual } from "node:crypto";
import { ServerResponse } from "node:http";
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { createRequire } from "node:module";
import { toBinary } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues } from "@connectrpc/connect";
import {
  IntrospectTokenResponseSchema,
  TokenIntrospectionService,
} from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { parseToken, TOKEN_DIGEST_BYTES, TOKEN_LENGTH } from "@perps/token-client/protocol";
import {
  SERVICE_CREDENTIAL_HEADER,
  type ServiceCredentialCheck,
} from "../admin-auth/service-credential.js";
import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import { joined, type RequestBody } from "../http/request-body.js";
import type { Exchange } from "../server/exchange.js";
import { FORWARD_AUTH_METHOD } from "../server/forward-auth-endpoint.js";
import { clientAddress, routeScopes } from "../server/forward-auth-request.js";
import { authorityCheck } from "../server/host-guard.js";
import { acceptedRequestId } from "../server/request-id.js";
import type { ListenerName } from "../server/served-service.js";
import {
  type GrpcStreamTerms,
  grpcStreamTerms,
  readGrpcStream,
  type StreamRoute,
  serveGrpcStreamBody,
} from "../server/wire/grpc-stream-unary.js";
import type { UnaryCalls } from "../server/wire/unary-method.js";
import type { LastUseRecorder } from "../store/last-use-recorder.js";
import { allowedFrom } from "../store/token-grants.js";
import type { CachedTokenRecord, TokenRecordCache } from "../store/token-record-cache.js";
import type { BearerIdentity } from "../token/bearer-authenticator.js";
import { introspectionAnswer } from "../token/token-introspection-service.js";
import type { CheckCounter, CheckTally } from "./check-tally.js";

// A live token's check answers, encoded once per cached record.

/** What a live token's check answers, encoded once and kept beside its cached record. */
export interface LiveAnswers {
  /** IntrospectTokenResponse in its gRPC envelope. */
  readonly grpc: Uint8Array;
  /** The `/auth` answer's head, as `writeHead` takes it (name, value, name, value…). */
  readonly auth: string[];
}

/** A live token's identity, as its answers carry it. */
export type LiveIdentity = BearerIdentity;

/** A message in its gRPC envelope: no flags (uncompressed), its length, its bytes. */
function envelope(message: Uint8Array): Uint8Array {
  const bytes = Buffer.alloc(5 + message.length);
  bytes.writeUInt32BE(message.length, 1);
  bytes.set(message, 5);
  return bytes;
}

/**
 * The answers of a live token, the same bytes as the pipeline's
 * (token-introspection-service.ts, forward-auth-endpoint.ts): the parity
 * test holds them to it.
 */
export function liveAnswers(identity: LiveIdentity): LiveAnswers {
  return {
    grpc: envelope(toBinary(IntrospectTokenResponseSchema, introspectionAnswer(identity))),
    auth: [
      "x-user-id",
      identity.userId,
      "x-token-id",
      identity.tokenId,
      "x-token-scopes",
      identity.grants.scopes.join(","),
      "cache-control",
      "no-store",
      "content-length",
      "0",
    ],
  };
}

export interface CheckLaneOptions {
  /** The token records kept in memory: the lane answers only what they hold. */
  cache: TokenRecordCache;
  tally: CheckTally;
  listener: ListenerName;
  /** The calling proxy's credential check of `/auth` (SERVICE_CREDENTIALS_FILE). Default: off. */
  serviceCheck?: ServiceCredentialCheck;
  /** Server time in Unix ms. Default `Date.now`. */
  now?: () => number;
  /** Where each answered token's use is noted (ListTokens' lastUsedAt). Default: nowhere. */
  lastUse?: LastUseRecorder;
}

/** The pipeline's way in for a stream the lane read and could not answer. */
export interface StreamPipeline {
  readonly route: StreamRoute;
  readonly methods: UnaryCalls;
  /** The exchange of the call, once the pipeline takes it. */
  begin(method: string): Exchange;
  contextValues(exchange: Exchange): ContextValues;
}

export interface CheckLane {
  /** Takes an IntrospectToken gRPC stream: false, having read nothing, to leave it to the pipeline. */
  takeStream(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    pipeline: StreamPipeline,
  ): boolean;
  /** Answers an HTTP/1.1 `GET /auth` of a cached live token: false, having answered nothing, to leave it to the pipeline. */
  answerAuth(req: NodeServerRequest, res: NodeServerResponse): boolean;
}

/** The metric labels of the lane's answers: those the pipeline gives the same answers. */
const INTROSPECT_METHOD = `${TokenIntrospectionService.typeName}/${TokenIntrospectionService.method.introspectToken.name}`;
export const INTROSPECT_CHECK = { method: INTROSPECT_METHOD, protocol: "grpc" } as const;
export const AUTH_CHECK = { method: FORWARD_AUTH_METHOD, protocol: "http" } as const;

/** IntrospectToken's request path, the one the lane takes off raw streams. */
export const INTROSPECT_PATH = `/${INTROSPECT_METHOD}`;

// base64url character → 6-bit value; -1 for any other byte.
const B64 = new Int8Array(256).fill(-1);
for (const [i, c] of [
  ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
].entries()) {
  B64[c.charCodeAt(0)] = i;
}
const BEARER = "Bearer ";
const P = 0x70;
const T = 0x74;
const UNDERSCORE = 0x5f;
const B64_CHARS = Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
/** `{<tag>}t<token id>` (keys.ts): 22 characters of tag, 16 of id. */
const KEY_LENGTH = 41;
const keyBytes = Buffer.from("{0000000000000000000000}t0000000000000000", "latin1");

/**
 * The Redis key of a token's record, spelled from the token's characters
 * without decoding them (keys.ts spells the same key from the user's UUID;
 * test/unit/check-lane/check-lane-cache-key.test.ts holds the two equal): the tag is
 * base64url of the user's 16 bytes, the token's body characters 0–21 with
 * the last one's 4 low bits cleared; the id is base64url of the next 12
 * bytes, which start 2 bits into body character 21. Undefined when a
 * character is not base64url (no token's key).
 */
export function cacheKeyOf(token: Buffer): string | undefined {
  const body = 3;
  for (let j = 0; j < 21; j++) {
    const c = token[body + j] ?? 0;
    if ((B64[c] ?? -1) < 0) {
      return undefined;
    }
    keyBytes[1 + j] = c;
  }
  let previous = B64[token[body + 21] ?? 0] ?? -1;
  if (previous < 0) {
    return undefined;
  }
  keyBytes[22] = B64_CHARS[previous & 0x30] ?? 0;
  for (let k = 0; k < 16; k++) {
    const next = B64[token[body + 22 + k] ?? 0] ?? -1;
    if (next < 0) {
      return undefined;
    }
    keyBytes[25 + k] = B64_CHARS[((previous & 0x0f) << 2) | (next >> 4)] ?? 0;
    previous = next;
  }
  return keyBytes.toString("latin1", 0, KEY_LENGTH);
}

type Sha256 = (out: Buffer, input: Buffer) => void;

/** libsodium's SHA-256, about twice OpenSSL's speed for a token; node's where the binding cannot load. */
function loadSha256(): Sha256 {
  try {
    const sodium = createRequire(import.meta.url)("sodium-native") as {
      crypto_hash_sha256?: Sha256;
    };
    if (typeof sodium.crypto_hash_sha256 === "function") {
      return sodium.crypto_hash_sha256;
    }
  } catch {
    // Node's below.
  }
  return (out, input) => {
    hash("sha256", input, "buffer").copy(out);
  };
}

export function createCheckLane(opts: CheckLaneOptions): CheckLane {
  const { cache, tally, listener, serviceCheck, lastUse } = opts;
  const now = opts.now ?? Date.now;
  const sha256 = loadSha256();
  // One buffer of each, reused by every check: a check allocates nothing it need not keep.
  const digest = Buffer.alloc(32);
  const digestHead = digest.subarray(0, TOKEN_DIGEST_BYTES);
  // An `Authorization` header, with room for UTF-8 past its characters: a longer write holds no token.
  const authorizationBytes = Buffer.alloc(BEARER.length + TOKEN_LENGTH + 8);
  const headerToken = authorizationBytes.subarray(BEARER.length, BEARER.length + TOKEN_LENGTH);
  // `/auth` is answered whatever the name, if it is well-formed (host-guard.ts).
  const wellFormedHost = authorityCheck(undefined);
  const answersOf = new WeakMap<CachedTokenRecord, LiveAnswers>();
  const introspections: CheckCounter = tally.counter(INTROSPECT_CHECK, listener);
  const auths: CheckCounter = tally.counter(AUTH_CHECK, listener);

  // The Redis key of the record liveRecordOf found last: the use a live answer notes.
  let recordKey = "";

  /**
   * The record of a token (its 89 bytes) that the cache holds and that
   * matches it, live; undefined for anything else, which the pipeline
   * answers (its own checks, a miss read from Redis).
   */
  function liveRecordOf(token: Buffer): CachedTokenRecord | undefined {
    if (
      token.length !== TOKEN_LENGTH ||
      token[0] !== P ||
      token[1] !== T ||
      token[2] !== UNDERSCORE
    ) {
      return undefined;
    }
    const key = cacheKeyOf(token);
    if (key === undefined) {
      return undefined;
    }
    const record = cache.find(key);
    if (record === undefined) {
      return undefined;
    }
    recordKey = key;
    sha256(digest, token);
    // Constant time: how much of a guess matches must not show in the answer's timing.
    if (!timingSafeEqual(digestHead, record.digest) || record.expiresAtMs <= now()) {
      return undefined;
    }
    return record;
  }

  /** The answers of a live record, made once. */
  function answersOfRecord(record: CachedTokenRecord, token: Buffer): LiveAnswers | undefined {
    let answers = answersOf.get(record);
    if (answers === undefined) {
      const parsed = parseToken(token.toString("latin1"));
      if (parsed === undefined) {
        return undefined;
      }
      answers = liveAnswers({
        ...parsed,
        name: record.name,
        expiresAtMs: record.expiresAtMs,
        grants: record.grants,
      });
      answersOf.set(record, answers);
    }
    return answers;
  }

  // The client_ip of the request tokenOf read last (it has no other reader): in place, undefined when absent.
  let clientIp: Buffer | undefined;

  /**
   * The token of an IntrospectTokenRequest in one uncompressed envelope, in
   * place, with its client_ip in `clientIp`; undefined for anything else.
   */
  function tokenOf(body: RequestBody): Buffer | undefined {
    clientIp = undefined;
    if (!body.ended) {
      return undefined;
    }
    const bytes = joined(body);
    if (bytes.length < 5 || bytes[0] !== 0 || bytes.readUInt32BE(1) !== bytes.length - 5) {
      return undefined;
    }
    // The message's fields: the last `token` (1) and `client_ip` (2) win, others are skipped.
    let token: Buffer | undefined;
    let i = 5;
    while (i < bytes.length) {
      const tag = bytes[i++] ?? 0;
      if (tag > 0x7f) {
        return undefined; // A field number past 15: none is ours, leave it to the decoder.
      }
      const wire = tag & 7;
      if (wire === 2) {
        let len = 0;
        let shift = 0;
        let b: number;
        do {
          b = bytes[i++] ?? 0x80;
          len |= (b & 0x7f) << shift;
          shift += 7;
        } while (b > 0x7f && shift < 28 && i < bytes.length);
        if (b > 0x7f || i + len > bytes.length) {
          return undefined;
        }
        if (tag >> 3 === 1) {
          token = bytes.subarray(i, i + len);
        } else if (tag >> 3 === 2) {
          clientIp = bytes.subarray(i, i + len);
        }
        i += len;
      } else {
        return undefined;
      }
    }
    return token;
  }

  const OK_HEAD = { ":status": 200, "content-type": "application/grpc+proto" } as const;
  const OK_TRAILERS = { "grpc-status": "0" } as const;
  const WITH_TRAILERS = { waitForTrailers: true } as const;
  function sendOkTrailers(this: ServerHttp2Stream): void {
    this.sendTrailers(OK_TRAILERS);
  }

  function answerStream(
    stream: ServerHttp2Stream,
    terms: GrpcStreamTerms,
    requestId: string | undefined,
    answers: LiveAnswers,
  ): void {
    const head =
      requestId === undefined && terms.compression === null
        ? OK_HEAD
        : {
            ...OK_HEAD,
            ...(requestId === undefined ? {} : { "x-request-id": requestId }),
            ...(terms.compression === null ? {} : { "grpc-encoding": terms.compression.name }),
          };
    stream.respond(head, WITH_TRAILERS);
    stream.on("wantTrailers", sendOkTrailers);
    stream.end(answers.grpc);
  }

  return {
    takeStream(stream, headers, pipeline) {
      const { route, methods } = pipeline;
      const terms = grpcStreamTerms(methods, headers);
      if (terms === undefined) {
        return false;
      }
      // Refusals are the pipeline's, before any body byte is read.
      const admitted = methods.admission(route.unary.method, headers, stream.session?.socket);
      if (admitted instanceof ConnectError) {
        return false;
      }
      const started = performance.now();
      readGrpcStream(route, terms, stream, (body) => {
        const token = body === undefined ? undefined : tokenOf(body);
        const record = token === undefined ? undefined : liveRecordOf(token);
        // A token bound to addresses: live only for a client_ip inside them; the pipeline says inactive.
        const answers =
          record === undefined ||
          token === undefined ||
          (record.grants.allowList !== undefined &&
            !allowedFrom(record.grants, clientIp?.toString("utf8")))
            ? undefined
            : answersOfRecord(record, token);
        if (
          answers === undefined ||
          stream.destroyed ||
          (terms.deadline !== null && now() >= terms.deadline)
        ) {
          serveGrpcStreamBody(
            route,
            methods,
            stream,
            headers,
            terms,
            body,
            pipeline.begin(route.name),
            pipeline.contextValues,
            admitted,
          );
          return;
        }
        const requestId = acceptedRequestId(headers["x-request-id"]);
        answerStream(stream, terms, requestId, answers);
        lastUse?.used(recordKey);
        introspections.live(requestId, (performance.now() - started) / 1000);
      });
      return true;
    },

    answerAuth(req, res) {
      const url = req.url;
      if (
        req.method !== "GET" ||
        !(res instanceof ServerResponse) ||
        url === undefined ||
        !(url === "/auth" || url.startsWith("/auth/") || url.startsWith("/auth?"))
      ) {
        return false;
      }
      const { headers } = req;
      const host = headers.host;
      const authorization = headers.authorization;
      if (
        host === undefined ||
        !wellFormedHost(host) ||
        authorization === undefined ||
        authorization.length !== BEARER.length + TOKEN_LENGTH ||
        !authorization.startsWith(BEARER) ||
        serviceCheck?.(headers[SERVICE_CREDENTIAL_HEADER]) === false
      ) {
        return false;
      }
      // The route's scopes (`?scope=`): a name that is no scope is the pipeline's 400.
      const needed = url.length > 5 ? routeScopes(url) : undefined;
      if (needed !== undefined && "unknown" in needed) {
        return false;
      }
      const started = performance.now();
      // Any character past ASCII makes more bytes than characters: no token.
      const record =
        authorizationBytes.write(authorization, 0, "utf8") === authorization.length
          ? liveRecordOf(headerToken)
          : undefined;
      // Refusals of a live token (allow-list, scopes) are the pipeline's, as is anything not live.
      const answers =
        record === undefined ||
        (record.grants.allowList !== undefined &&
          !allowedFrom(record.grants, clientAddress(headers))) ||
        (needed !== undefined && (needed.mask & ~record.grants.scopeMask) !== 0)
          ? undefined
          : answersOfRecord(record, headerToken);
      // The secret is not left in memory the lane keeps.
      authorizationBytes.fill(0);
      if (answers === undefined) {
        return false;
      }
      const requestId = acceptedRequestId(headers["x-request-id"]);
      res.writeHead(
        200,
        requestId === undefined ? answers.auth : ["x-request-id", requestId, ...answers.auth],
      );
      res.end();
      lastUse?.used(recordKey);
      auths.live(requestId, (performance.now() - started) / 1000);
      return true;
    },
  };
}
