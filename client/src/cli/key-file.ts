import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { CliFailure } from "./cli-failure.js";

/** Options of {@link writeNewKeyFile}. */
export interface WriteKeyFileOptions {
  /** Where to write the private key. */
  path: string;
  /** Replace an existing file. Default false: an existing file is an error. */
  force?: boolean;
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Makes an Ed25519 key pair and writes the private key as PKCS#8 PEM with
 * mode 0600 (the format `openssl genpkey -algorithm ed25519` writes, so either
 * tool's keys work with the other). Returns the raw public key as 64 hex.
 */
export async function writeNewKeyFile(opts: WriteKeyFileOptions): Promise<string> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const pem = privateKey.export({ type: "pkcs8", format: "pem" });
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(opts.path, opts.force === true ? "w" : "wx", 0o600);
  } catch (err) {
    if (err instanceof Error && "code" in err && err.code === "EEXIST") {
      throw new CliFailure(`${opts.path} already exists; pass --force to replace it`);
    }
    throw new CliFailure(`cannot write ${opts.path}: ${reason(err)}`);
  }
  try {
    // Before writing: with --force the file may exist with a looser mode, and
    // the umask may have taken bits off a new one.
    await file.chmod(0o600);
    await file.writeFile(pem);
  } finally {
    await file.close();
  }
  const x = publicKey.export({ format: "jwk" }).x;
  if (x === undefined) {
    throw new CliFailure("the generated key has no public part");
  }
  return Buffer.from(x, "base64url").toString("hex");
}

/**
 * The 32-byte Ed25519 secret key of a key file: PKCS#8 PEM (ours or
 * OpenSSL's) or the key as 64 hex characters.
 */
export async function readPrivateKey(path: string): Promise<Uint8Array> {
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (err) {
    throw new CliFailure(`cannot read key file ${path}: ${reason(err)}`);
  }
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    return Buffer.from(text, "hex");
  }
  if (text.startsWith("-----BEGIN")) {
    let d: string | undefined;
    try {
      const key = createPrivateKey(text);
      d = key.asymmetricKeyType === "ed25519" ? key.export({ format: "jwk" }).d : undefined;
    } catch (err) {
      throw new CliFailure(`key file ${path}: ${reason(err)}`);
    }
    if (d !== undefined) {
      return Buffer.from(d, "base64url");
    }
  }
  throw new CliFailure(
    `key file ${path}: not an Ed25519 private key (PKCS#8 PEM, or 64 hex characters)`,
  );
}
