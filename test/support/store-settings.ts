import { SETTING_DEFAULTS } from "../../src/config/config.js";

/**
 * What the stores take from the configuration, at its defaults: the service
 * resolves them once (src/config), so a test or bench that builds a store
 * itself passes them, overriding what it tests.
 */
export const STORE_SETTINGS = {
  maxActivePerUser: SETTING_DEFAULTS.tokenMaxActivePerUser,
  rateLimitPerMinute: SETTING_DEFAULTS.tokenRateLimitPerMinute,
  listRateLimitPerMinute: SETTING_DEFAULTS.tokenListRateLimitPerMinute,
  waitTimeoutMs: SETTING_DEFAULTS.redisWaitTimeoutMs,
} as const;

/** What each listener takes from the configuration, at its defaults. */
export const LISTENER_LIMITS = {
  requestTimeoutMs: SETTING_DEFAULTS.requestTimeoutMs,
  answerTimeoutMs: SETTING_DEFAULTS.answerTimeoutMs,
  maxConnections: SETTING_DEFAULTS.maxConnectionsPerListener,
} as const;
