import * as ed from "@noble/ed25519";
import { readPrivateKey } from "./key-file.js";
import { UsageError } from "./usage-error.js";

/** Options of {@link resolvePublicKey}. */
export interface PublicKeySource {
  /** The command, for the usage error. */
  command: string;
  /** `--public-key`: 64 hex characters (either case; sent lowercase, as the service requires). */
  publicKey: string | undefined;
  /** `--key`: a private key file whose public key to use. */
  keyFile: string | undefined;
}

/** The public key named on the command line, by `--public-key HEX` or `--key FILE` (exactly one). */
export async function resolvePublicKey(src: PublicKeySource): Promise<string> {
  if ((src.publicKey === undefined) === (src.keyFile === undefined)) {
    throw new UsageError(src.command, "give exactly one of --public-key HEX and --key FILE");
  }
  if (src.publicKey !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(src.publicKey)) {
      throw new UsageError(src.command, "--public-key: must be 64 hex characters");
    }
    return src.publicKey.toLowerCase();
  }
  const secretKey = await readPrivateKey(src.keyFile ?? "");
  return ed.etc.bytesToHex(await ed.getPublicKeyAsync(secretKey));
}
