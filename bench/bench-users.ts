import {
  createHash,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  sign,
} from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** The operator the bench registers keys as: its secret, new for each bench process. */
export const BENCH_OPERATOR_SECRET = `op_bench-${randomBytes(16).toString("hex")}`;

/** Writes an ADMIN_CREDENTIALS_FILE listing the bench operator into `dir`; returns its path. */
export function writeBenchCredentials(dir: string): string {
  const path = join(dir, "admin-credentials");
  const hash = createHash("sha256").update(BENCH_OPERATOR_SECRET).digest("hex");
  writeFileSync(path, `bench sha256:${hash}\n`, { mode: 0o600 });
  return path;
}

export interface BenchUser {
  readonly userId: string;
  readonly privateKey: KeyObject;
  readonly publicKeyHex: string;
}

/**
 * Users with node:crypto Ed25519 keys: signing with a private KeyObject
 * (OpenSSL) is far faster than a pure-JS signer, so pre-signing a load phase
 * takes seconds, not minutes.
 */
export function newBenchUsers(count: number): BenchUser[] {
  return Array.from({ length: count }, () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    // The raw key is the last 32 bytes of the SPKI DER encoding.
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    return { userId: randomUUID(), privateKey, publicKeyHex: raw.toString("hex") };
  });
}

export function signHex(user: BenchUser, message: Uint8Array): string {
  return sign(null, message, user.privateKey).toString("hex");
}

/** Registers every user's key through the internal listener (Connect JSON), 50 at a time. */
export async function registerUsers(internalUrl: string, users: readonly BenchUser[]) {
  const url = `${internalUrl}/perps.token.v1.UserKeyService/PutUserKey`;
  for (let i = 0; i < users.length; i += 50) {
    await Promise.all(
      users.slice(i, i + 50).map(async (user) => {
        const res = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${BENCH_OPERATOR_SECRET}`,
          },
          body: JSON.stringify({ userId: user.userId, publicKey: user.publicKeyHex }),
        });
        if (res.status !== 200) {
          throw new Error(`PutUserKey answered ${res.status}: ${await res.text()}`);
        }
      }),
    );
  }
}
