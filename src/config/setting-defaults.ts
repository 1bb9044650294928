/**
 * The defaults of the settings that tests and tools pass when they build a
 * module themselves: declared once, here. parseConfig gives them when the
 * variable is unset; the modules below src/config take every setting
 * complete and apply none (test/unit/config/setting-defaults.test.ts, which
 * also holds each name to the Config field parseConfig gives it to).
 */
export const SETTING_DEFAULTS = {
  /** TOKEN_MAX_ACTIVE_PER_USER. */
  tokenMaxActivePerUser: 1000,
  /** TOKEN_RATE_LIMIT_PER_MINUTE. */
  tokenRateLimitPerMinute: 60,
  /** TOKEN_LIST_RATE_LIMIT_PER_MINUTE. */
  tokenListRateLimitPerMinute: 120,
  /**
   * REDIS_REVOKE_REPLICAS_ACK: "auto" waits for one replica where the
   * topology has replicas (src/store/revocation-replicas.ts).
   */
  redisRevokeReplicasAck: "auto",
  /** REDIS_WAIT_TIMEOUT_MS. */
  redisWaitTimeoutMs: 500,
  /** REQUEST_TIMEOUT_MS. */
  requestTimeoutMs: 30_000,
  /** ANSWER_TIMEOUT_MS. */
  answerTimeoutMs: 10_000,
  /** MAX_CONNECTIONS_PER_LISTENER. */
  maxConnectionsPerListener: 4096,
  /** TOKEN_CACHE_MAX_ENTRIES: about 30 MB a process (docs/operating-at-scale.md). */
  tokenCacheMaxEntries: 100_000,
} as const;
