/**
 * Tells when the primary the service writes to is another one: a Sentinel
 * failover (the client reconnects to a different address), a URL whose name
 * now resolves elsewhere, a Redis Cluster whose slots are served by other
 * primaries. Without it, a log read after such an incident shows only
 * requests.
 *
 * Tested by test/integration/revocation-failover.test.ts, test/unit/redis/primary-watch.test.ts.
 */

import { Cluster } from "ioredis";
import type { RedisClient } from "./redis-client.js";

/** The primaries before and after, `host:port`, comma-separated when several (a cluster's). */
export interface PrimaryChange {
  from: string;
  to: string;
}

export interface PrimaryWatch {
  /** Follows this client (each client the holder builds: a replaced one continues the story). */
  watch(client: RedisClient): void;
}

/** What changed between two sets of primaries, or undefined when nothing did. */
export function primaryChange(
  before: readonly string[],
  after: readonly string[],
): PrimaryChange | undefined {
  const gone = before.filter((p) => !after.includes(p));
  const came = after.filter((p) => !before.includes(p));
  if (before.length === 0 || (gone.length === 0 && came.length === 0)) {
    return undefined;
  }
  return { from: gone.join(","), to: came.join(",") };
}

function slotPrimaries(cluster: Cluster): string[] {
  const primaries = new Set<string>();
  for (const nodes of cluster.slots) {
    const primary = nodes?.[0];
    if (primary !== undefined) {
      primaries.add(primary);
    }
  }
  return [...primaries].sort();
}

export function createPrimaryWatch(onChange: (change: PrimaryChange) => void): PrimaryWatch {
  let known: string[] = [];
  const seen = (now: string[]): void => {
    if (now.length === 0) {
      return;
    }
    const change = primaryChange(known, now);
    known = now;
    if (change !== undefined) {
      onChange(change);
    }
  };
  return {
    watch(client) {
      if (client instanceof Cluster) {
        client.on("refresh", () => seen(slotPrimaries(client)));
        return;
      }
      client.on("ready", () => {
        const { remoteAddress, remotePort } = client.stream;
        // A unix socket has no address: its path never moves.
        if (remoteAddress !== undefined && remotePort !== undefined) {
          seen([`${remoteAddress}:${remotePort}`]);
        }
      });
    },
  };
}
