import * as ed from "@noble/ed25519";

/** Signs with an Ed25519 private key held in memory. */
export interface PrivateKeySigner {
  /** The 32-byte Ed25519 secret key (seed), as bytes or 64 hex characters. */
  privateKey: Uint8Array | string;
}

/**
 * Signs elsewhere (a hardware key, a KMS, a wallet): receives the exact UTF-8
 * message and answers the 64-byte Ed25519 signature, as bytes or hex.
 */
export type SignCallback = (message: Uint8Array) => Promise<Uint8Array | string>;

/** How a client signs its requests. */
export type Signer = PrivateKeySigner | SignCallback;

/** A signer reduced to what the wire needs: 128 lowercase hex characters. */
export type SignFunction = (message: Uint8Array) => Promise<string>;

const SECRET_KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;

function secretKeyBytes(key: Uint8Array | string): Uint8Array {
  if (typeof key === "string") {
    if (!/^[0-9a-fA-F]{64}$/.test(key)) {
      throw new TypeError("signer.privateKey: must be 64 hex characters (a 32-byte Ed25519 key)");
    }
    return ed.etc.hexToBytes(key.toLowerCase());
  }
  if (!(key instanceof Uint8Array) || key.length !== SECRET_KEY_BYTES) {
    throw new TypeError("signer.privateKey: must be 32 bytes (an Ed25519 secret key)");
  }
  // A copy, so that a caller wiping or reusing its buffer cannot change the key under us.
  return key.slice();
}

// A callback is someone else's code: check its answer here, or a bad one would
// come back from the service as a puzzling "Invalid signature".
function signatureHex(signature: Uint8Array | string): string {
  if (typeof signature === "string") {
    const hex = signature.toLowerCase();
    if (!/^[0-9a-f]{128}$/.test(hex)) {
      throw new TypeError("signer: the callback must answer 128 hex characters or 64 bytes");
    }
    return hex;
  }
  if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_BYTES) {
    throw new TypeError("signer: the callback must answer 128 hex characters or 64 bytes");
  }
  return ed.etc.bytesToHex(signature);
}

/** The sign function of a signer; a private key is checked here, once, not on first use. */
export function createSignFunction(signer: Signer): SignFunction {
  if (typeof signer === "function") {
    return async (message) => signatureHex(await signer(message));
  }
  const secretKey = secretKeyBytes(signer.privateKey);
  return async (message) => ed.etc.bytesToHex(await ed.signAsync(message, secretKey));
}
