import type { OperatorLookup } from "./call-gate.js";
import {
  type CredentialsFileTrouble,
  reloadCountedAs,
  type WatchedCredentialsFileOptions,
  watchCredentialsFile,
} from "./watched-credentials-file.js";

export interface OperatorCredentialsOptions
  extends Omit<WatchedCredentialsFileOptions, "onReload"> {
  /**
   * Told after each re-read: the number of operators, why the file was
   * refused (the old set stays), or that it is gone (no operator any more).
   */
  onReload?: (outcome: { operators: number } | CredentialsFileTrouble) => void;
}

/** The operators of ADMIN_CREDENTIALS_FILE (who may call the admin RPCs), kept current. */
export interface OperatorCredentials {
  /** The operator whose secret this is, or undefined: compared with every operator, in constant time. */
  operatorOf: OperatorLookup;
  /**
   * Re-reads the file now (SIGHUP); a bad file keeps the operators in use and
   * throws its ConfigError; a missing one leaves no operator.
   */
  reload(): void;
  /** Stops watching the file. */
  close(): void;
}

/**
 * ADMIN_CREDENTIALS_FILE's operators from its reading at start, kept current
 * (watched-credentials-file.ts: a file broken later keeps the operators, one
 * deleted leaves none).
 */
export function loadOperatorCredentials(opts: OperatorCredentialsOptions): OperatorCredentials {
  const { onReload, ...watched } = opts;
  const file = watchCredentialsFile({
    ...watched,
    onReload: reloadCountedAs("operators", onReload),
  });
  return { operatorOf: file.nameOf, reload: file.reload, close: file.close };
}
