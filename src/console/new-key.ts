/** A key pair made in the browser for a new user. */
export interface NewKey {
  /** The private key as an unencrypted PKCS#8 PEM, the file the console signs in with. */
  privateKeyPem: string;
  /** The raw 32-byte public key as 64 lowercase hex characters, what PutUserKey registers. */
  publicKeyHex: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const bytes = new Uint8Array(der);
  let binary = "";
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/**
 * A new Ed25519 key pair from WebCrypto: the private key exported once, as
 * the PEM `openssl genpkey -algorithm ed25519` writes, to be downloaded; the
 * pair itself is not kept.
 */
export async function generateKey(): Promise<NewKey> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  // Checked rather than cast: the type is named in the DOM's lib only, and
  // test/unit/console/new-key.test.ts runs this under node's.
  if (!("privateKey" in pair)) {
    throw new Error("WebCrypto made one key, not an Ed25519 key pair");
  }
  const [pkcs8, raw] = await Promise.all([
    crypto.subtle.exportKey("pkcs8", pair.privateKey),
    crypto.subtle.exportKey("raw", pair.publicKey),
  ]);
  return {
    privateKeyPem: pem("PRIVATE KEY", pkcs8),
    publicKeyHex: Array.from(new Uint8Array(raw), (b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

/**
 * The call an operator runs to register the key, as the README's walkthrough
 * makes it: `buf curl` over gRPC to PutUserKey on the internal listener
 * (`$INTERNAL`, else the default http://127.0.0.1:9090), with the operator's
 * secret (`$OPERATOR_SECRET`, else the one `npm start` generated, when run in
 * the service's folder).
 */
export function registrationCommand(userId: string, publicKeyHex: string): string {
  const body = JSON.stringify({ userId, publicKey: publicKeyHex });
  return [
    "buf curl --http2-prior-knowledge --protocol grpc \\",
    `  -H "authorization: Bearer \${OPERATOR_SECRET:-$(cat .data/redis/operator-secret)}" \\`,
    `  -d '${body}' \\`,
    `  "\${INTERNAL:-http://127.0.0.1:9090}/perps.token.v1.UserKeyService/PutUserKey"`,
  ].join("\n");
}
