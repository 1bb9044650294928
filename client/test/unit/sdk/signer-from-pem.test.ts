import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, createPublicKey, verify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as ed from "@noble/ed25519";
import { writeNewKeyFile } from "../../../src/cli/key-file.js";
import { signerFromPem } from "../../../src/sdk/index.js";
import { createSignFunction } from "../../../src/sdk/signer.js";

const dir = mkdtempSync(join(tmpdir(), "signer-from-pem-"));

/** Runs openssl with `args` and answers the file it wrote to `out`. */
function openssl(out: string, ...args: string[]): string {
  const path = join(dir, out);
  execFileSync("openssl", [...args, "-out", path], { stdio: ["ignore", "ignore", "pipe"] });
  return readFileSync(path, "utf8");
}

/** The raw 32-byte secret key Node.js reads from the same PEM. */
function nodeSecretKey(pem: string): Uint8Array {
  const d = createPrivateKey(pem).export({ format: "jwk" }).d;
  assert.ok(d !== undefined);
  return new Uint8Array(Buffer.from(d, "base64url"));
}

/** Signs with the signer and verifies with Node.js against the PEM's own public key. */
async function assertSignsFor(pem: string, signer: ReturnType<typeof signerFromPem>) {
  const message = new TextEncoder().encode("create|user|1700000000000|3600|bot");
  const signature = await createSignFunction(signer)(message);
  assert.ok(
    verify(null, message, createPublicKey(pem), Buffer.from(signature, "hex")),
    "the signature verifies with the key file's public key",
  );
}

function rejectsWith(pem: string | Uint8Array, message: RegExp): void {
  assert.throws(
    () => signerFromPem(pem),
    (err) => err instanceof TypeError && message.test(err.message),
  );
}

describe("signerFromPem", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the key `openssl genpkey -algorithm ed25519` writes, as text or bytes", async () => {
    const pem = openssl("openssl.pem", "genpkey", "-algorithm", "ed25519");
    const signer = signerFromPem(pem);
    assert.deepEqual(signer.privateKey, nodeSecretKey(pem));
    assert.deepEqual(signerFromPem(readFileSync(join(dir, "openssl.pem"))), signer);
    await assertSignsFor(pem, signer);
  });

  it("reads the key `perps-tokens keygen` writes, and answers the public key it printed", async () => {
    const path = join(dir, "keygen.pem");
    const publicKey = await writeNewKeyFile({ path });
    const pem = readFileSync(path, "utf8");
    const signer = signerFromPem(pem);
    assert.deepEqual(signer.privateKey, nodeSecretKey(pem));
    const jwk = createPublicKey(pem).export({ format: "jwk" });
    assert.equal(Buffer.from(jwk.x ?? "", "base64url").toString("hex"), publicKey);
    await assertSignsFor(pem, signer);
  });

  it("allows text around the block and CRLF line ends (RFC 7468)", () => {
    const pem = openssl("crlf.pem", "genpkey", "-algorithm", "ed25519");
    const framed = `Key for the bot\r\n${pem.replaceAll("\n", "\r\n")}\r\n`;
    assert.deepEqual(signerFromPem(framed).privateKey, nodeSecretKey(pem));
  });

  it("reads RFC 8410's example: a PKCS#8 v2 key with attributes and its public key", async () => {
    // OpenSSL cannot read this form; the public key inside shows the seed was found.
    const rfc8410 = `-----BEGIN PRIVATE KEY-----
MHICAQEwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
oB8wHQYKKoZIhvcNAQkJFDEPDA1DdXJkbGUgQ2hhaXJzgSEAGb9ECWmEzf6FQbrB
Z9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PRIVATE KEY-----
`;
    const { privateKey } = signerFromPem(rfc8410);
    assert.ok(privateKey instanceof Uint8Array);
    assert.equal(
      Buffer.from(await ed.getPublicKeyAsync(privateKey)).toString("hex"),
      "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1",
    );
  });

  it("refuses an encrypted key, saying how to decrypt it", () => {
    const pem = openssl(
      "encrypted.pem",
      ...["genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:secret"],
    );
    assert.match(pem, /BEGIN ENCRYPTED PRIVATE KEY/);
    rejectsWith(pem, /^signerFromPem: the key is encrypted; .*openssl pkey/);
  });

  it("refuses a public key", () => {
    openssl("for-public.pem", "genpkey", "-algorithm", "ed25519");
    const pem = openssl("public.pem", "pkey", "-in", join(dir, "for-public.pem"), "-pubout");
    rejectsWith(pem, /^signerFromPem: this is a public key; signing needs the private key$/);
  });

  for (const [name, args, kind] of [
    ["RSA", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"], "RSA"],
    ["EC P-256", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], "EC"],
    ["Ed448", ["-algorithm", "ed448"], "Ed448"],
    ["X25519", ["-algorithm", "x25519"], "X25519"],
  ] as const) {
    it(`refuses a PKCS#8 ${name} key, naming its kind`, () => {
      const pem = openssl(`${kind}.pem`, "genpkey", ...args);
      assert.match(pem, /BEGIN PRIVATE KEY/);
      rejectsWith(pem, new RegExp(`^signerFromPem: not an Ed25519 key \\(${kind}\\)$`));
    });
  }

  it("refuses a traditional (non-PKCS#8) EC key file", () => {
    const pem = openssl("ec-traditional.pem", "ecparam", "-name", "prime256v1", "-genkey");
    rejectsWith(pem, /^signerFromPem: not an Ed25519 key \(EC\)$/);
  });

  it("refuses text that is not PEM, bad base64, and damaged DER", () => {
    const pem = openssl("damaged.pem", "genpkey", "-algorithm", "ed25519");
    const der = Buffer.from(pem.replace(/-----[^-]+-----/g, "").replace(/\s/g, ""), "base64");
    const wrap = (bytes: Uint8Array) =>
      `-----BEGIN PRIVATE KEY-----\n${Buffer.from(bytes).toString("base64")}\n-----END PRIVATE KEY-----\n`;
    rejectsWith("a".repeat(64), /^signerFromPem: not a PEM file/);
    rejectsWith(
      "-----BEGIN PRIVATE KEY-----\n%%%%\n-----END PRIVATE KEY-----",
      /^signerFromPem: PEM block "PRIVATE KEY": the body is not base64$/,
    );
    rejectsWith(wrap(der.subarray(0, der.length - 1)), /^signerFromPem: .*truncated/);
    rejectsWith(wrap(Buffer.concat([der, Buffer.from([0])])), /data after the key/);
    // A 31-byte key inside well-formed DER.
    const short = Buffer.from(der);
    short[1] = 0x2d;
    short[13] = 0x21;
    short[15] = 0x1f;
    rejectsWith(wrap(short.subarray(0, short.length - 1)), /not 32 bytes/);
    // Version 2 is not PKCS#8.
    const v3 = Buffer.from(der);
    v3[4] = 2;
    rejectsWith(wrap(v3), /unknown version/);
  });
});
