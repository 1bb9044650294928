import { createHash } from "node:crypto";

/**
 * The fingerprint of an Ed25519 public key (64 hex characters): `SHA256:` and
 * the SHA-256 of its 32 raw bytes in base64 without padding, written as
 * OpenSSH writes its own (which hash a different encoding of the key, so the
 * two never match). An operator can work it out from a key file with
 * `openssl pkey -pubout -outform DER | tail -c 32 | openssl dgst -sha256 -binary | base64 | tr -d =`.
 */
export function keyFingerprint(publicKeyHex: string): string {
  const digest = createHash("sha256").update(Buffer.from(publicKeyHex, "hex")).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}
