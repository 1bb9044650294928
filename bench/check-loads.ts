import { create, toBinary } from "@bufbuild/protobuf";
import { IntrospectTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { grpcFrame } from "./grpc-frame.js";
import type { LoadResult } from "./load-result.js";
import { runPacedHttpLoad } from "./paced-http-load.js";
import { runRawGrpcLoad } from "./raw-grpc-load.js";
import { runRawHttpLoad } from "./raw-http-load.js";

export const INTROSPECT_PATH = "/perps.token.v1.TokenIntrospectionService/IntrospectToken";
/** The path edge proxies call; the check floor answers any path. */
export const FORWARD_AUTH_PATH = "/auth";
/** Keep-alive connections of the paced HTTP/1.1 client (as for the create half-peak). */
export const PACED_HTTP_CONNECTIONS = 64;

/**
 * A load: closed loop at a concurrency (gRPC: over `connections`, default
 * 4; 1 is a client channel's way), or paced at a rate (open model).
 */
export type CheckLoad = { concurrency: number; connections?: number } | { rate: number };

/** One pre-framed IntrospectTokenRequest per token. */
export function introspectFrames(tokens: readonly string[]): Buffer[] {
  return tokens.map((token) =>
    grpcFrame(
      toBinary(IntrospectTokenRequestSchema, create(IntrospectTokenRequestSchema, { token })),
    ),
  );
}

/**
 * IntrospectToken over gRPC (bench/raw-grpc-load.ts, 4 HTTP/2 connections).
 * Only an active answer counts: `active: false` is the empty message, so a
 * token the service does not find is an error of the run.
 */
export function introspectLoad(
  address: string,
  frames: readonly Buffer[],
  load: CheckLoad,
  seconds: number,
): () => Promise<LoadResult> {
  return () =>
    runRawGrpcLoad({
      address,
      path: INTROSPECT_PATH,
      frames,
      concurrency: "concurrency" in load ? load.concurrency : 0,
      ...("connections" in load && load.connections !== undefined
        ? { connections: load.connections }
        : {}),
      ...("rate" in load ? { rate: load.rate } : {}),
      seconds,
      accept: (messageLength) => messageLength > 0,
    });
}

/**
 * GET `/auth` with `Authorization: Bearer <token>`, the tokens in turn, over
 * HTTP/1.1 keep-alive on bare sockets: the raw client in a closed loop, the
 * paced client at a rate. Anything but a 2xx is an error.
 */
export function bearerHttpLoad(
  url: string,
  tokens: readonly string[],
  load: CheckLoad,
  seconds: number,
): () => Promise<LoadResult> {
  const common = {
    url,
    method: "GET",
    path: FORWARD_AUTH_PATH,
    bodies: [],
    bearerTokens: tokens,
  } as const;
  return "rate" in load
    ? () =>
        runPacedHttpLoad({
          ...common,
          rate: load.rate,
          seconds,
          maxConnections: PACED_HTTP_CONNECTIONS,
        })
    : () => runRawHttpLoad({ ...common, connections: load.concurrency, seconds });
}
