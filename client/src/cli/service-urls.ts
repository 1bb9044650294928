import { UsageError } from "./usage-error.js";

/** Environment variable with the public listener's base URL (overridden by `--url`). */
export const PUBLIC_URL_ENV = "PERPS_TOKENS_URL";
/** Environment variable with the internal listener's base URL (overridden by `--internal-url`). */
export const INTERNAL_URL_ENV = "PERPS_TOKENS_INTERNAL_URL";

export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080";
export const DEFAULT_INTERNAL_URL = "http://127.0.0.1:9090";

/** Help lines shared by the commands that call the public listener. */
export const PUBLIC_URL_HELP = `  --url URL            public listener (default $${PUBLIC_URL_ENV} or ${DEFAULT_PUBLIC_URL})`;
/** Help lines shared by the commands that call the internal listener. */
export const INTERNAL_URL_HELP = `  --internal-url URL   internal listener (default $${INTERNAL_URL_ENV} or ${DEFAULT_INTERNAL_URL})`;

// The flag's value, else the environment's (when not empty), else the default; checked.
function listenerUrl(
  command: string,
  flag: string,
  value: string | undefined,
  fromEnv: string | undefined,
  fallback: string,
): string {
  return checkedUrl(command, flag, value ?? (fromEnv || undefined) ?? fallback);
}

function checkedUrl(command: string, flag: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(command, `${flag}: not a URL: ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(command, `${flag}: must be an http:// or https:// URL: ${value}`);
  }
  return value;
}

/** The public listener's base URL: `--url`, else $PERPS_TOKENS_URL, else the local default. */
export function publicUrl(
  command: string,
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return listenerUrl(command, "--url", flag, env[PUBLIC_URL_ENV], DEFAULT_PUBLIC_URL);
}

/** The internal listener's base URL: `--internal-url`, else $PERPS_TOKENS_INTERNAL_URL, else the local default. */
export function internalUrl(
  command: string,
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return listenerUrl(command, "--internal-url", flag, env[INTERNAL_URL_ENV], DEFAULT_INTERNAL_URL);
}
