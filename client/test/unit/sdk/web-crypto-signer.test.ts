import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPublicKey, verify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  createTokenClient,
  cryptoKeyFromPem,
  signerFromCryptoKey,
  signerFromPem,
} from "../../../src/sdk/index.js";
import { createSignFunction } from "../../../src/sdk/signer.js";

const dir = mkdtempSync(join(tmpdir(), "web-crypto-signer-"));

function opensslKey(name: string, ...args: string[]): string {
  const path = join(dir, name);
  execFileSync("openssl", ["genpkey", ...args, "-out", path], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  return readFileSync(path, "utf8");
}

const message = new TextEncoder().encode("createToken:1700000000000::bot:user");

describe("cryptoKeyFromPem and signerFromCryptoKey", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("imports an openssl key as a non-extractable signing key that signs as the key file does", async () => {
    const pem = opensslKey("openssl.pem", "-algorithm", "ed25519");
    const key = await cryptoKeyFromPem(pem);
    assert.equal(key.extractable, false);
    assert.deepEqual(key.usages, ["sign"]);
    assert.equal(key.algorithm.name, "Ed25519");
    await assert.rejects(crypto.subtle.exportKey("pkcs8", key), /not extractable/);
    const signature = await createSignFunction(signerFromCryptoKey(key))(message);
    assert.match(signature, /^[0-9a-f]{128}$/);
    assert.ok(verify(null, message, createPublicKey(pem), Buffer.from(signature, "hex")));
    // Ed25519 is deterministic: the same bytes as the in-memory signer's.
    assert.equal(signature, await createSignFunction(signerFromPem(pem))(message));
  });

  it("reads a key file given as bytes, leaving the caller's buffer as it was", async () => {
    const pem = opensslKey("bytes.pem", "-algorithm", "ed25519");
    const bytes = new TextEncoder().encode(pem);
    await cryptoKeyFromPem(bytes);
    // Only the SDK's own decoded copies are zeroed.
    assert.equal(new TextDecoder().decode(bytes), pem);
  });

  it("refuses what signerFromPem refuses, naming itself", async () => {
    const rsa = opensslKey("rsa.pem", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024");
    await assert.rejects(
      cryptoKeyFromPem(rsa),
      (err) =>
        err instanceof TypeError && err.message === "cryptoKeyFromPem: not an Ed25519 key (RSA)",
    );
    await assert.rejects(cryptoKeyFromPem("hello"), /^TypeError: cryptoKeyFromPem: not a PEM file/);
    // signerFromPem keeps its own name in its messages.
    assert.throws(
      () => signerFromPem(rsa),
      /^TypeError: signerFromPem: not an Ed25519 key \(RSA\)$/,
    );
  });

  it("signs a client's requests", async () => {
    const pem = opensslKey("client.pem", "-algorithm", "ed25519");
    const signer = signerFromCryptoKey(await cryptoKeyFromPem(pem));
    let sent: Record<string, unknown> = {};
    const client = createTokenClient({
      baseUrl: "http://127.0.0.1:1",
      signer,
      now: () => 1_700_000_000_000,
      fetch: async (_input, init) => {
        sent = JSON.parse(String(init?.body)) as Record<string, unknown>;
        return Response.json({ id: "i", token: "t", expiresAt: "2030-01-01" }, { status: 201 });
      },
    });
    await client.createToken({ userId: "user", name: "bot" });
    assert.equal(sent.timestamp, 1_700_000_000_000);
    const signed = new TextEncoder().encode("createToken:1700000000000::bot:user");
    assert.ok(
      verify(null, signed, createPublicKey(pem), Buffer.from(String(sent.signature), "hex")),
    );
  });
});
