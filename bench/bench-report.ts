import type { LoadResult } from "./load-result.js";
import type { TokenMemory } from "./redis-memory.js";

export type Series =
  | "REST create"
  | "REST delete"
  | "Connect create"
  | "gRPC create"
  | "gRPC create, 1 connection"
  | "Floor create"
  | "Floor gRPC create"
  | "Floor gRPC create, 1 connection"
  | "gRPC introspect"
  | "gRPC introspect, 1 connection"
  | "Forward-auth"
  | "Floor check"
  | "Floor check gRPC"
  | "Floor check gRPC, 1 connection"
  | "Peer REST create"
  | "Peer gRPC create"
  | "Peer gRPC create, 1 connection"
  | "Peer forward-auth"
  | "Peer gRPC introspect"
  | "Peer gRPC introspect, 1 connection";

/** One measured phase: a protocol and operation at one concurrency. */
export interface Phase extends LoadResult {
  series: Series;
  concurrency: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** Client-issued Redis commands per request (INFO commandstats deltas). */
  redisRoundTrips: number;
  /** Every command Redis counted during the phase, scripts' inner calls included. */
  redisCommands: Record<string, number>;
  /**
   * CPU time the service spent per answered request (µs), all its threads
   * (the event loop, the thread pool verifying signatures, GC helpers).
   */
  serviceCpuUsPerRequest: number;
  /**
   * CPU time of the service's main thread (the event loop) per answered
   * request (µs): everything but the signature check itself, which runs on
   * the thread pool. The event loop is the one part that cannot use more
   * cores, so 1 s ÷ this is the most one process can serve.
   */
  eventLoopCpuUsPerRequest: number;
  /** CPU time of the load generator (this process) per answered request (µs). */
  loadGeneratorCpuUsPerRequest: number;
  /** CPU time of the Redis server per answered request (µs). */
  redisCpuUsPerRequest: number;
}

/** One row of the target table, as evaluated for a run (bench/targets.ts). */
export interface Target {
  name: string;
  /** The goal as text, e.g. "≥ 0.60 × ceiling", from the target's one goal value. */
  goal: string;
  /** How it is measured (for the README). */
  how: string;
  measured: string;
  met: boolean;
}

/** One side of the peer comparison at one protocol and concurrency: both alternating runs, and the one taken. */
export interface PeerPoint {
  protocol: "REST create" | "gRPC create" | "Forward-auth" | "gRPC introspect";
  concurrency: number;
  /** gRPC over one connection (a client channel's way); absent: 4 connections, or HTTP/1.1. */
  connections?: 1;
  /** The two runs of this service (A) and of the peer (B), in the order A B A B. */
  ours: Phase[];
  peer: Phase[];
  /** The better run of each side (higher throughput). */
  oursTaken: Phase;
  peerTaken: Phase;
}

/** The peer phase (issue 15): this service against the Go grpc-gateway peer, alternating. */
export interface PeerComparison {
  /** The peer binary that ran. */
  binary: string;
  /** Pre-signed requests per run. */
  requests: number;
  /** Seconds per check run, and live tokens each side checks (absent before issue 20). */
  checkSeconds?: number;
  checkTokens?: number;
  points: PeerPoint[];
}

export interface BenchReport {
  date: string;
  quick: boolean;
  /** The phases that ran (all of them unless `--only`). */
  ran: string[];
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    redis: string;
    pinned: boolean;
    /** The service's worker processes (its default: one per core); absent in runs before issue 20 (one). */
    workers?: number;
    /** Whether each worker bound its own SO_REUSEPORT socket. */
    reusePort?: boolean;
  };
  /** The ceiling: Ed25519 verify calls per second on one thread. */
  verifyCeiling: { perSecond: number; microseconds: number };
  phases: Phase[];
  /** REST create at half its peak throughput (open model, fixed rate). */
  halfPeak?: Phase;
  /**
   * REST create against bench/floor-server.ts (node:http, one verify on the
   * thread pool, one EVALSHA, nothing else) at the concurrency of the REST
   * create peak: what this machine allows any server of the contract.
   */
  floor?: Phase;
  /** The floor server at half of `floor`'s throughput (paced, open model, like `halfPeak`). */
  floorHalfPeak?: Phase;
  /**
   * The token checks: IntrospectToken (gRPC), forward-auth (HTTP/1.1) and
   * bench/check-floor-server.ts, closed loop (in `phases`) and each paced at
   * half of its own peak (here), against seeded live tokens.
   */
  checks?: {
    users: number;
    sessionTokens: number;
    namedTokens: number;
    /** IntrospectToken, forward-auth and the check floor, each at half of its own peak (those that ran). */
    halfPeaks: Phase[];
  };
  leak?: { requests: number[]; rssMb: number[] };
  memory?: TokenMemory;
  peer?: PeerComparison;
  /** The peer phase's line when it was skipped (no binary). */
  peerSkipped?: string;
  targets: Target[];
  /** Targets whose phases did not run (`--only`). */
  notMeasured: string[];
}
