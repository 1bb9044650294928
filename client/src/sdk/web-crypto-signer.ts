import { readEd25519KeyFile } from "./ed25519-key-file.js";
import type { SignCallback } from "./signer.js";

/**
 * A WebCrypto key as the platform compiling this names it: the DOM's
 * `CryptoKey` in a browser build, node:crypto's `webcrypto.CryptoKey` under
 * Node.js types.
 */
export type WebCryptoKey = Parameters<typeof globalThis.crypto.subtle.sign>[1];

const ED25519 = { name: "Ed25519" };

function subtle(caller: string): typeof globalThis.crypto.subtle {
  // Browsers offer crypto.subtle only in a secure context (HTTPS, or http://localhost).
  const found = (globalThis as { crypto?: { subtle?: typeof globalThis.crypto.subtle } }).crypto
    ?.subtle;
  if (found === undefined) {
    throw new TypeError(
      `${caller}: WebCrypto is not available here (a browser offers it on HTTPS and localhost only)`,
    );
  }
  return found;
}

/**
 * Imports an Ed25519 private key file (the PKCS#8 PEM that `perps-tokens
 * keygen` and `openssl genpkey -algorithm ed25519` write, as text or bytes)
 * into WebCrypto as a non-extractable signing key: from then on no script can
 * read the key's bytes, only sign with it. The bytes read from the file are
 * zeroed once imported. Throws a TypeError naming the problem for a file that
 * is not such a key (the same checks as signerFromPem).
 */
export async function cryptoKeyFromPem(pem: string | Uint8Array): Promise<WebCryptoKey> {
  const { pkcs8, secretKey } = readEd25519KeyFile(pem, "cryptoKeyFromPem");
  secretKey.fill(0);
  try {
    return await subtle("cryptoKeyFromPem").importKey("pkcs8", pkcs8, ED25519, false, ["sign"]);
  } finally {
    pkcs8.fill(0);
  }
}

/**
 * A signer that signs with a WebCrypto Ed25519 private key (from
 * {@link cryptoKeyFromPem}, or `crypto.subtle.generateKey`/`importKey` with
 * the "sign" usage), so that the key's bytes never need to be in the page's
 * memory. Pass it as the client's `signer`.
 */
export function signerFromCryptoKey(key: WebCryptoKey): SignCallback {
  const webCrypto = subtle("signerFromCryptoKey");
  // A copy: WebCrypto takes no view of a SharedArrayBuffer.
  return async (message) =>
    new Uint8Array(await webCrypto.sign(ED25519, key, new Uint8Array(message)));
}
