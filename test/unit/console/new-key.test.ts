import assert from "node:assert/strict";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { describe, it } from "node:test";
import { generateKey, registrationCommand } from "../../../src/console/new-key.js";

// Node's WebCrypto is the browser's API: the key pair is made as the page makes
// it, and read back by node's own crypto as openssl would read the file.
describe("generateKey", () => {
  it("a PKCS#8 PEM private key and its raw public key in hex, which belong together", async () => {
    const key = await generateKey();
    assert.match(
      key.privateKeyPem,
      /^-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END PRIVATE KEY-----\n$/,
    );
    assert.match(key.publicKeyHex, /^[0-9a-f]{64}$/);
    const der = createPublicKey(createPrivateKey(key.privateKeyPem)).export({
      format: "der",
      type: "spki",
    });
    assert.equal(der.subarray(der.length - 32).toString("hex"), key.publicKeyHex);
    assert.notEqual((await generateKey()).publicKeyHex, key.publicKeyHex);
  });
});

describe("registrationCommand", () => {
  it("the README's buf curl call to PutUserKey, with the user id and key in its body", () => {
    const command = registrationCommand("0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab", "ab".repeat(32));
    assert.equal(
      command,
      [
        "buf curl --http2-prior-knowledge --protocol grpc \\",
        `  -H "authorization: Bearer \${OPERATOR_SECRET:-$(cat .data/redis/operator-secret)}" \\`,
        `  -d '{"userId":"0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab","publicKey":"${"ab".repeat(32)}"}' \\`,
        `  "\${INTERNAL:-http://127.0.0.1:9090}/perps.token.v1.UserKeyService/PutUserKey"`,
      ].join("\n"),
    );
  });
});
