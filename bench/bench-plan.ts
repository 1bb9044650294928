/** Concurrencies of the peer phase (issue 15), quick or full. */
export const PEER_CONCURRENCIES: readonly number[] = [8, 32, 64];

/**
 * How much a run measures: the full run, or `--quick` (about a minute and a half).
 * Concurrency 8, 32 and 64 are the targets' (issue 27); 128 shows the saturation.
 */
export interface BenchPlan {
  readonly quick: boolean;
  readonly concurrencies: readonly number[];
  /** Seconds of load per protocol and concurrency. */
  readonly seconds: number;
  /** Seconds of warm-up load (not reported) before the first measured phase. */
  readonly warmupSeconds: number;
  readonly verifySeconds: number;
  /** Users the requests are spread over (each with one registered key). */
  readonly users: number;
  /** Token checks: users, and live tokens of theirs (half session, half named). */
  readonly checkUsers: number;
  readonly checkTokens: number;
  /** Leak check: requests per step, and steps (RSS read after each step). */
  readonly leakStepRequests: number;
  readonly leakSteps: number;
  readonly leakConcurrency: number;
  /** Redis memory: users, and tokens of each kind. */
  readonly memoryUsers: number;
  readonly memoryTokensPerKind: number;
  /** Peer phase: concurrencies, and pre-signed requests per run (each side, each protocol, each of the two rounds). */
  readonly peerConcurrencies: readonly number[];
  readonly peerRequests: number;
}

export function benchPlan(quick: boolean): BenchPlan {
  return quick
    ? {
        quick,
        concurrencies: [8, 32, 64, 128],
        seconds: 1,
        warmupSeconds: 1,
        verifySeconds: 1,
        users: 200,
        checkUsers: 1_000,
        checkTokens: 10_000,
        leakStepRequests: 5_000,
        leakSteps: 2,
        leakConcurrency: 32,
        memoryUsers: 1_000,
        memoryTokensPerKind: 5_000,
        peerConcurrencies: PEER_CONCURRENCIES,
        peerRequests: 2_000,
      }
    : {
        quick,
        concurrencies: [8, 32, 64, 128],
        seconds: 8,
        warmupSeconds: 5,
        verifySeconds: 3,
        users: 2_000,
        checkUsers: 1_000,
        checkTokens: 10_000,
        leakStepRequests: 20_000,
        leakSteps: 10,
        leakConcurrency: 32,
        memoryUsers: 10_000,
        memoryTokensPerKind: 100_000,
        peerConcurrencies: PEER_CONCURRENCIES,
        peerRequests: 20_000,
      };
}
