import { readEd25519KeyFile } from "./ed25519-key-file.js";
import type { PrivateKeySigner } from "./signer.js";

/**
 * A signer from an Ed25519 private key file as `perps-tokens keygen` and
 * `openssl genpkey -algorithm ed25519` write it: unencrypted PKCS#8 PEM
 * ("-----BEGIN PRIVATE KEY-----"), given as the file's text or bytes. Works in
 * browsers too (no Node.js crypto). Throws a TypeError naming the problem for
 * anything else: another key type, an encrypted key, a public key.
 */
export function signerFromPem(pem: string | Uint8Array): PrivateKeySigner {
  const { pkcs8, secretKey } = readEd25519KeyFile(pem, "signerFromPem");
  // The copy inside the DER is not needed: only the secret key is kept.
  pkcs8.fill(0);
  return { privateKey: secretKey };
}
