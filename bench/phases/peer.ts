import type { BenchContext, BenchPhase } from "../bench-context.js";
import type { PeerPoint, Phase, Series } from "../bench-report.js";
import { bearerHttpLoad, introspectFrames, introspectLoad } from "../check-loads.js";
import { grpcCreated, restCreated } from "../create-answers.js";
import { grpcFrame } from "../grpc-frame.js";
import type { LoadResult } from "../load-result.js";
import { peakPhase } from "../peak-phase.js";
import { registerPeerUsers } from "../peer/peer-keys.js";
import {
  PEER_DIR,
  type PeerProcess,
  peerBinary,
  peerBuilt,
  startPeerProcess,
} from "../peer/peer-process.js";
import { peerCreateFrame } from "../peer/peer-requests.js";
import { createTokensVia } from "../peer/side-tokens.js";
import { runRawGrpcLoad } from "../raw-grpc-load.js";
import { runRawHttpLoad } from "../raw-http-load.js";
import { CREATE_PATH } from "./create.js";

/** HTTP/2 connections of the gRPC load (as for IntrospectToken). */
const GRPC_CONNECTIONS = 4;

type Side = "ours" | "peer";
type Protocol = PeerPoint["protocol"];
type CreateProtocol = "REST create" | "gRPC create";
type CheckProtocol = "Forward-auth" | "gRPC introspect";

/** Live tokens each side checks in the check rounds (made through its own REST create). */
const CHECK_TOKENS = 2_000;

/**
 * One load of `count` fresh pre-signed creates against one side: the same
 * load generator for both (raw HTTP/1.1 sockets for REST, raw HTTP/2 for
 * gRPC), the requests signed before the clock starts.
 */
function createLoad(
  ctx: BenchContext,
  peer: PeerProcess,
  side: Side,
  protocol: CreateProtocol,
  concurrency: number,
  count: number,
  connections = GRPC_CONNECTIONS,
): () => Promise<LoadResult> {
  const signed = ctx.signer.creates(count);
  const service = ctx.service();
  if (protocol === "REST create") {
    const port = side === "ours" ? service.publicPort : peer.httpPort;
    const bodies = signed.map((r) => r.json);
    return () =>
      runRawHttpLoad({
        url: `http://127.0.0.1:${port}`,
        method: "POST",
        path: "/user/tokens",
        bodies,
        connections: concurrency,
        accept: restCreated,
      });
  }
  const frames =
    side === "ours"
      ? signed.map((r) => grpcFrame(r.binary))
      : signed.map((r) => peerCreateFrame(r.json));
  const port = side === "ours" ? service.publicPort : peer.grpcPort;
  return () =>
    runRawGrpcLoad({
      address: `127.0.0.1:${port}`,
      path: CREATE_PATH,
      frames,
      once: true,
      concurrency,
      connections,
      seconds: 0,
      accept: grpcCreated,
    });
}

/**
 * One closed-loop check load against one side, on that side's own live
 * tokens: forward-auth (`GET /auth` with the bearer token; ours on the
 * internal listener, the peer's on its REST port) over the raw HTTP/1.1
 * client, IntrospectToken over the raw HTTP/2 client; only an active answer
 * (2xx, or a non-empty message) counts.
 */
function checkLoad(
  ctx: BenchContext,
  peer: PeerProcess,
  side: Side,
  protocol: CheckProtocol,
  concurrency: number,
  tokens: readonly string[],
  frames: readonly Buffer[],
  connections = GRPC_CONNECTIONS,
): () => Promise<LoadResult> {
  const service = ctx.service();
  const seconds = ctx.plan.seconds;
  if (protocol === "Forward-auth") {
    const port = side === "ours" ? service.internalPort : peer.httpPort;
    return bearerHttpLoad(`http://127.0.0.1:${port}`, tokens, { concurrency }, seconds);
  }
  const port = side === "ours" ? service.internalPort : peer.grpcPort;
  return introspectLoad(`127.0.0.1:${port}`, frames, { concurrency, connections }, seconds);
}

/** The series of the gRPC rows over one connection. */
const ONE_CONNECTION_SERIES: Record<Side, Partial<Record<Protocol, Series>>> = {
  ours: {
    "gRPC create": "gRPC create, 1 connection",
    "gRPC introspect": "gRPC introspect, 1 connection",
  },
  peer: {
    "gRPC create": "Peer gRPC create, 1 connection",
    "gRPC introspect": "Peer gRPC introspect, 1 connection",
  },
};

const SERIES: Record<Side, Record<Protocol, Series>> = {
  ours: {
    "REST create": "REST create",
    "gRPC create": "gRPC create",
    "Forward-auth": "Forward-auth",
    "gRPC introspect": "gRPC introspect",
  },
  peer: {
    "REST create": "Peer REST create",
    "gRPC create": "Peer gRPC create",
    "Forward-auth": "Peer forward-auth",
    "gRPC introspect": "Peer gRPC introspect",
  },
};

/**
 * This service against the Go grpc-gateway peer (issues 15 and 20): REST
 * create, gRPC create, forward-auth and IntrospectToken at each concurrency,
 * alternating A B A B (this service, the
 * peer, this service, the peer), each run on fresh pre-signed requests with
 * the same load generator and settings. The peer gets a redis-server of its
 * own and every bench user's key through its gRPC PutUserKey; this service
 * runs as in every phase (default configuration, rate and cap raised, log
 * line at info). Of each side's two runs the better (higher throughput) is
 * taken: on a shared machine, interference only ever slows a run, so the
 * better run is the nearer estimate for both sides alike, where a mean would
 * carry the noise of whichever run was disturbed.
 */
export const peerPhase: BenchPhase = {
  name: "peer",
  needsService: true,
  async run(ctx) {
    const binary = peerBinary();
    if (!peerBuilt()) {
      const line = `peer phase skipped: ${binary} not built; run ${PEER_DIR}/build.sh (or set PEER_BIN)`;
      ctx.log(line);
      return { peerSkipped: line };
    }
    const { plan } = ctx;
    const peer = await startPeerProcess(ctx.pinned ? { cpus: "0" } : {});
    try {
      await registerPeerUsers(`127.0.0.1:${peer.grpcPort}`, ctx.users);
      const service = ctx.service();
      const checkTokens = {
        ours: await createTokensVia(
          `http://127.0.0.1:${service.publicPort}`,
          ctx.signer.creates(CHECK_TOKENS).map((r) => r.json),
        ),
        peer: await createTokensVia(
          `http://127.0.0.1:${peer.httpPort}`,
          ctx.signer.creates(CHECK_TOKENS).map((r) => r.json),
        ),
      };
      const checkFrames = {
        ours: introspectFrames(checkTokens.ours),
        peer: introspectFrames(checkTokens.peer),
      };
      const load = (side: Side, protocol: Protocol, c: number, connections: number) =>
        protocol === "Forward-auth" || protocol === "gRPC introspect"
          ? checkLoad(
              ctx,
              peer,
              side,
              protocol,
              c,
              checkTokens[side],
              checkFrames[side],
              connections,
            )
          : createLoad(ctx, peer, side, protocol, c, plan.peerRequests, connections);
      const measure = (side: Side, protocol: Protocol, c: number, connections: number) =>
        ctx.measure(
          connections === 1
            ? (ONE_CONNECTION_SERIES[side][protocol] ?? SERIES[side][protocol])
            : SERIES[side][protocol],
          c,
          load(side, protocol, c, connections),
          side === "peer" ? { server: peer, redis: peer.redis.client } : {},
        );
      // Warm-up of both sides (JIT, pools, script caches), not reported.
      const warmup = Math.min(plan.peerRequests, 5_000);
      for (const protocol of ["REST create", "gRPC create"] as const) {
        for (const side of ["ours", "peer"] as const) {
          await createLoad(ctx, peer, side, protocol, 32, warmup)();
        }
      }
      for (const protocol of ["Forward-auth", "gRPC introspect"] as const) {
        for (const side of ["ours", "peer"] as const) {
          await checkLoad(ctx, peer, side, protocol, 32, checkTokens[side], checkFrames[side])();
        }
      }
      const points: PeerPoint[] = [];
      const protocols: Protocol[] = [
        "REST create",
        "gRPC create",
        "Forward-auth",
        "gRPC introspect",
      ];
      // Then the gRPC rows over one connection, as a client channel calls (issue 27).
      const runsOf: [Protocol, number][] = [
        ...protocols.map((p): [Protocol, number] => [p, GRPC_CONNECTIONS]),
        ["gRPC create", 1],
        ["gRPC introspect", 1],
      ];
      for (const [protocol, connections] of runsOf) {
        for (const c of plan.peerConcurrencies) {
          const ours: Phase[] = [];
          const theirs: Phase[] = [];
          const label = `${protocol}${connections === 1 ? ", 1 connection" : ""}`;
          for (let round = 1; round <= 2; round++) {
            ctx.log(
              `peer phase: ${label} c=${c}, round ${round} of 2 (this service, then the peer)`,
            );
            ours.push(await measure("ours", protocol, c, connections));
            theirs.push(await measure("peer", protocol, c, connections));
          }
          // The better run without errors; with errors in both, the first (its errors are counted).
          const oursTaken = peakPhase(ours) ?? ours[0];
          const peerTaken = peakPhase(theirs) ?? theirs[0];
          if (oursTaken === undefined || peerTaken === undefined) {
            throw new Error("peer phase: no runs");
          }
          points.push({
            protocol,
            concurrency: c,
            ...(connections === 1 ? { connections: 1 as const } : {}),
            ours,
            peer: theirs,
            oursTaken,
            peerTaken,
          });
        }
      }
      return {
        peer: {
          binary,
          requests: plan.peerRequests,
          checkSeconds: plan.seconds,
          checkTokens: CHECK_TOKENS,
          points,
        },
      };
    } finally {
      await peer.stop();
    }
  },
};
