import { parseConfig } from "../config/config.js";

/** The limits of the configuration that the REST document states. */
export interface ServiceLimits {
  /** TOKEN_MAX_LIFETIME_SECONDS: the largest `expiresIn`. */
  maxLifetimeSeconds: number;
  /** TOKEN_RATE_LIMIT_PER_MINUTE: signed calls per user per minute. */
  rateLimitPerMinute: number;
  /** TOKEN_MAX_ACTIVE_PER_USER: most live tokens per user. */
  maxActivePerUser: number;
}

const defaults = parseConfig({});

/** The limits of the default configuration: those of the committed openapi.json. */
export const DEFAULT_SERVICE_LIMITS: Readonly<ServiceLimits> = {
  maxLifetimeSeconds: defaults.tokenMaxLifetimeSeconds,
  rateLimitPerMinute: defaults.tokenRateLimitPerMinute,
  maxActivePerUser: defaults.tokenMaxActivePerUser,
};

export function sameLimits(a: ServiceLimits, b: ServiceLimits): boolean {
  return (
    a.maxLifetimeSeconds === b.maxLifetimeSeconds &&
    a.rateLimitPerMinute === b.rateLimitPerMinute &&
    a.maxActivePerUser === b.maxActivePerUser
  );
}
