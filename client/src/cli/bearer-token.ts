import { UsageError } from "./usage-error.js";

/** Environment variable with the bearer token of `list` and `introspect` (overridden by the command line). */
export const TOKEN_ENV = "PERPS_TOKEN";

/** Help line of the environment variable, for the commands that read it. */
export const TOKEN_ENV_HELP = `$${TOKEN_ENV} is read when the command line gives no token; prefer it to
the command line, which other users of the host can see (ps).`;

/**
 * The bearer token a command works with: the one on its command line (`given`),
 * else $PERPS_TOKEN; a usage error naming both when neither has one. The
 * token itself never appears in a message.
 */
export function bearerToken(
  command: string,
  given: string | undefined,
  how: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const token = given || env[TOKEN_ENV] || undefined;
  if (token === undefined) {
    throw new UsageError(command, `give the token as ${how} or in $${TOKEN_ENV}`);
  }
  return token;
}
