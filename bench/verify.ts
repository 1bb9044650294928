// Ed25519 verify throughput on one thread: the service's engines, libsodium
// (sodium-native, shipped) and node's built-in crypto (OpenSSL, the fallback),
// against @noble/ed25519 (what the SDK signs with). `npm run bench:verify`
import * as ed from "@noble/ed25519";
import { createEd25519Verifier } from "../src/crypto/ed25519-verifier.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? "2");
const { secretKey, publicKey } = await ed.keygenAsync();
const message = new TextEncoder().encode(
  `createToken:${Date.now()}:604800:bot:0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab`,
);
const signature = await ed.signAsync(message, secretKey);
const publicKeyHex = Buffer.from(publicKey).toString("hex");
const sodium = createEd25519Verifier({ engine: "sodium" });
const openssl = createEd25519Verifier({ engine: "openssl" });

async function measure(name: string, verify: () => Promise<boolean> | boolean) {
  const deadline = performance.now() + SECONDS * 1000;
  let count = 0;
  const started = performance.now();
  while (performance.now() < deadline) {
    if (!(await verify())) {
      throw new Error(`${name}: a valid signature did not verify`);
    }
    count++;
  }
  const perSecond = count / ((performance.now() - started) / 1000);
  return { name, perSecond: Math.round(perSecond), microseconds: +(1e6 / perSecond).toFixed(1) };
}

console.log(`Node ${process.version}, one thread, ${SECONDS} s each, parsed key cached`);
const results = [
  await measure("libsodium (sodium-native), shipped", () =>
    sodium.verify(publicKeyHex, message, signature),
  ),
  await measure("node:crypto (OpenSSL), fallback", () =>
    openssl.verify(publicKeyHex, message, signature),
  ),
  await measure("@noble/ed25519 verifyAsync", () => ed.verifyAsync(signature, message, publicKey)),
];
console.table(results);
const [libsodium, nodeCrypto] = results;
if (libsodium !== undefined && nodeCrypto !== undefined) {
  console.log(
    `libsodium is ${(libsodium.perSecond / nodeCrypto.perSecond).toFixed(2)}x OpenSSL's rate on one thread`,
  );
}
