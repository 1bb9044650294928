import { createRedisClient, type RedisClient, waitForRedisReady } from "./redis-client.js";
import { createRebuildingRedisHolder, type RedisHolder } from "./redis-holder.js";
import type { RedisTopology } from "./redis-topology.js";

export interface RedisConnectionsOptions {
  topology: RedisTopology;
  /** Replicas each write waits for (WAIT); above 0, those writes get connections of their own. */
  minReplicasAck: number;
  /** Whether revocations may wait for replicas though other writes do not: they too need those connections. Default false. */
  revocationsMayWait?: boolean;
  /** How long WAIT may take; the wait lanes' command timeout is this plus a second. */
  waitTimeoutMs: number;
  /** Connections that carry writes waiting for replicas, one write each at a time. Default 4. */
  waitLanes?: number;
  /** Told of each client built (the first and the rebuilt ones), e.g. to log its errors. */
  onClient?: (client: RedisClient) => void;
  /** Told of each client built for `main` (the first and the rebuilt ones), e.g. to follow its primary. */
  onMainClient?: (client: RedisClient) => void;
  /** Told when a client that closed for good was replaced. */
  onRebuild?: (rebuilds: number) => void;
}

/** The service's Redis clients, each rebuilt when it closes for good. */
export interface RedisConnections {
  /** Reads, checks, and writes that wait for no replica. */
  readonly main: RedisHolder;
  /**
   * Writes followed by WAIT: a WAIT blocks its connection until replicas
   * confirm or its timeout passes, and WAIT covers the writes its own
   * connection sent before it, so each such write and its WAIT take a
   * connection of their own and never hold up a check. Empty when no write
   * waits for a replica.
   */
  readonly waitLanes: readonly RedisHolder[];
  /**
   * Resolves once every client is ready, or rejects after `timeoutMs`. A
   * Redis Cluster client holds a pipeline until it is ready, whatever the
   * command timeout, so the lanes are waited for too.
   */
  ready(timeoutMs: number): Promise<void>;
  close(): void;
}

export function openRedisConnections(opts: RedisConnectionsOptions): RedisConnections {
  const hold = (commandTimeoutMs?: number, onMain?: (client: RedisClient) => void) =>
    createRebuildingRedisHolder({
      create: () =>
        createRedisClient({
          topology: opts.topology,
          ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
        }),
      onClient: (client) => {
        opts.onClient?.(client);
        onMain?.(client);
      },
      ...(opts.onRebuild === undefined ? {} : { onRebuild: opts.onRebuild }),
    });
  const main = hold(undefined, opts.onMainClient);
  const lanes =
    opts.minReplicasAck > 0 || opts.revocationsMayWait === true
      ? Array.from({ length: opts.waitLanes ?? 4 }, () => hold(opts.waitTimeoutMs + 1000))
      : [];
  return {
    main,
    waitLanes: lanes,
    async ready(timeoutMs) {
      await Promise.all([main, ...lanes].map((h) => waitForRedisReady(h.client, timeoutMs)));
    },
    close() {
      for (const holder of [main, ...lanes]) {
        holder.close();
      }
    },
  };
}
