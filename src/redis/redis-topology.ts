/** A Redis host and port. */
export interface HostPort {
  host: string;
  port: number;
}

/** Where the service's Redis is and what shape it has. */
export type RedisTopology =
  /** One server by URL: `redis://` or `rediss://` (TLS). */
  | { kind: "url"; url: string }
  /** One server on a unix socket. */
  | { kind: "socket"; path: string }
  /** Redis Cluster, reached through any of its nodes. */
  | { kind: "cluster"; nodes: HostPort[]; password?: string; tls?: boolean }
  /** A Sentinel-managed primary. */
  | { kind: "sentinel"; sentinels: HostPort[]; name: string; password?: string; tls?: boolean };
