import { readFileSync } from "node:fs";
import {
  type CredentialsFileRead,
  readCredentialsFile,
} from "../admin-auth/watched-credentials-file.js";
import { type Config, ConfigError } from "../config/config.js";
import { type ConsoleAssets, loadConsoleAssets } from "../server/console-assets.js";

// The files a start reads besides the environment, each failure a ConfigError
// naming its variable. Apart from run-service.ts so that the primary, which
// checks them before any worker starts, does not load the service itself.

/** Reads the PEM file a variable names; a ConfigError naming it when it cannot. */
export function readPem(variable: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`${variable}: cannot read ${path} (${String(err)})`);
  }
}

/** Reads the PEM files named by TLS_CERT_FILE and TLS_KEY_FILE. */
export function readTls(files: NonNullable<Config["tls"]>): { cert: string; key: string } {
  return {
    cert: readPem("TLS_CERT_FILE", files.certFile),
    key: readPem("TLS_KEY_FILE", files.keyFile),
  };
}

/** The token console's built files, or a ConfigError saying how to build them or turn the console off. */
export function readConsole(): ConsoleAssets {
  try {
    return loadConsoleAssets();
  } catch (err) {
    throw new ConfigError(
      `CONSOLE: ${err instanceof Error ? err.message : String(err)}; build it (npm run build) or set CONSOLE=off`,
    );
  }
}

/** The files a configuration names, read once at start and handed to the service. */
export interface StartFiles {
  /** ADMIN_CREDENTIALS_FILE's first reading (then watched by the service). */
  adminCredentials: CredentialsFileRead | undefined;
  /** SERVICE_CREDENTIALS_FILE's first reading (then watched by the service). */
  serviceCredentials: CredentialsFileRead | undefined;
  /** TLS_CERT_FILE and TLS_KEY_FILE's PEM. Undefined: cleartext. */
  tls: { cert: string; key: string } | undefined;
  /** ADMIN_CLIENT_CA_FILE's PEM. Undefined: no client certificates asked. */
  adminClientCa: string | undefined;
  /** The console's built files when CONSOLE is on. */
  console: ConsoleAssets | undefined;
}

/** Reads every file `config` names; the first failure throws its ConfigError. */
export function readStartFiles(config: Config): StartFiles {
  return {
    adminCredentials:
      config.adminCredentialsFile === undefined
        ? undefined
        : readCredentialsFile(config.adminCredentialsFile, "ADMIN_CREDENTIALS_FILE"),
    serviceCredentials:
      config.serviceCredentialsFile === undefined
        ? undefined
        : readCredentialsFile(config.serviceCredentialsFile, "SERVICE_CREDENTIALS_FILE"),
    tls: config.tls === undefined ? undefined : readTls(config.tls),
    adminClientCa:
      config.adminClientCaFile === undefined
        ? undefined
        : readPem("ADMIN_CLIENT_CA_FILE", config.adminClientCaFile),
    console: config.console ? readConsole() : undefined,
  };
}
