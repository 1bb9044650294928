/**
 * How many replicas a revocation (a delete, an operator's revoke, a key's
 * removal) waits for. Replication is asynchronous: a primary that is failed
 * over loses what its replica had not received, and a lost create only costs
 * its caller a retry while a lost revocation brings a token back to life. So
 * where the topology has replicas to fail over to, a revocation is
 * acknowledged only once one confirmed it.
 */

import type { RevokeReplicasAck } from "../config/config.js";
import type { RedisHolder } from "../redis/redis-holder.js";
import type { RedisTopology } from "../redis/redis-topology.js";
import { replicasLookedFor, startReplicaCensus } from "../redis/replica-census.js";

export interface RevocationReplicasOptions {
  /** REDIS_REVOKE_REPLICAS_ACK, as the config parsed it. */
  revokeReplicasAck: RevokeReplicasAck;
  /** REDIS_MIN_REPLICAS_ACK: what every write waits for; a revocation never waits for fewer. */
  minReplicasAck: number;
  /**
   * Whether the primaries were seen with a replica (src/redis/replica-census.ts);
   * undefined while nobody knows yet, which counts as yes: a revocation is
   * never acknowledged unconfirmed on a guess.
   */
  hasReplicas: boolean | undefined;
}

/** Replicas that must confirm a revocation now. */
export function revocationReplicas(opts: RevocationReplicasOptions): number {
  const setting = opts.revokeReplicasAck;
  const own = setting === "auto" ? (opts.hasReplicas === false ? 0 : 1) : setting;
  return Math.max(own, opts.minReplicasAck);
}

/** Whether revocations may ever wait for a replica (they then need wait lanes). */
export function revocationsMayWait(
  kind: RedisTopology["kind"],
  opts: Omit<RevocationReplicasOptions, "hasReplicas">,
): boolean {
  return (
    revocationReplicas({ ...opts, hasReplicas: replicasLookedFor(kind) ? undefined : false }) > 0
  );
}

/** How many replicas a revocation waits for, now. */
export interface RevocationReplicas {
  current(): number;
  close(): void;
}

/**
 * Follows whether the topology has replicas (replica-census.ts) and answers
 * for each revocation how many must confirm it.
 */
export function followRevocationReplicas(
  kind: RedisTopology["kind"],
  redis: RedisHolder,
  opts: Omit<RevocationReplicasOptions, "hasReplicas">,
): RevocationReplicas {
  const census = startReplicaCensus({ kind, redis });
  return {
    current: () => revocationReplicas({ ...opts, hasReplicas: census.hasReplicas }),
    close: () => census.close(),
  };
}
