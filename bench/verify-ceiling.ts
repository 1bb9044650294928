import { generateKeyPairSync, sign } from "node:crypto";
import { createEd25519Verifier } from "../src/crypto/ed25519-verifier.js";

/**
 * The ceiling of the create path: `verify` calls per second on one thread,
 * with the service's own verifier (libsodium where it loads, parsed key cached),
 * over a message shaped like a create's.
 */
export function measureVerifyCeiling(seconds: number): { perSecond: number; microseconds: number } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicKeyHex = publicKey
    .export({ format: "der", type: "spki" })
    .subarray(-32)
    .toString("hex");
  const message = new TextEncoder().encode(
    `createToken:${Date.now()}:3600::0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab`,
  );
  const signature = sign(null, message, privateKey);
  const verifier = createEd25519Verifier();
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let count = 0;
  while (performance.now() < deadline) {
    // Checking the time every 100 calls keeps the clock out of the figure.
    for (let i = 0; i < 100; i++) {
      if (!verifier.verify(publicKeyHex, message, signature)) {
        throw new Error("a valid signature did not verify");
      }
    }
    count += 100;
  }
  const perSecond = count / ((performance.now() - started) / 1000);
  return { perSecond: Math.round(perSecond), microseconds: Math.round(1e7 / perSecond) / 10 };
}
