import type { ServiceLookup } from "./service-credential.js";
import {
  type CredentialsFileTrouble,
  reloadCountedAs,
  type WatchedCredentialsFileOptions,
  watchCredentialsFile,
} from "./watched-credentials-file.js";

export interface ServiceCredentialsOptions extends Omit<WatchedCredentialsFileOptions, "onReload"> {
  /**
   * Told after each re-read: the number of services, why the file was
   * refused (the old set stays), or that it is gone (no service any more).
   */
  onReload?: (outcome: { services: number } | CredentialsFileTrouble) => void;
}

/** The calling services of SERVICE_CREDENTIALS_FILE (service-credential.ts), kept current. */
export interface ServiceCredentials {
  /** The service whose secret this is, or undefined: compared with every service, in constant time. */
  serviceOf: ServiceLookup;
  /**
   * Re-reads the file now (SIGHUP); a bad file keeps the services in use and
   * throws its ConfigError; a missing one leaves no service.
   */
  reload(): void;
  /** Stops watching the file. */
  close(): void;
}

/**
 * SERVICE_CREDENTIALS_FILE's services (the format of ADMIN_CREDENTIALS_FILE)
 * from its reading at start, kept current (watched-credentials-file.ts: a
 * file broken later keeps the services, one deleted leaves none).
 */
export function loadServiceCredentials(opts: ServiceCredentialsOptions): ServiceCredentials {
  const { onReload, ...watched } = opts;
  const file = watchCredentialsFile({
    ...watched,
    onReload: reloadCountedAs("services", onReload),
  });
  return { serviceOf: file.nameOf, reload: file.reload, close: file.close };
}
