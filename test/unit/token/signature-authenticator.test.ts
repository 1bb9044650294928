import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  createEd25519Verifier,
  type Ed25519Verifier,
} from "../../../src/crypto/ed25519-verifier.js";
import { createSignatureAuthenticator } from "../../../src/token/signature-authenticator.js";
import { newUser, signBytes } from "../../support/signing.js";

// Real keys and the service's verifier; the registered keys are a map, whose
// reads are counted (the store's Redis read is tested by the integration suites).

/** A fresh key pair, as a user registers one. */
async function newKey() {
  const { publicKey, secretKey } = await newUser();
  return {
    hex: publicKey,
    sign: async (message: Uint8Array) => Buffer.from(await signBytes(secretKey, message), "hex"),
  };
}

function setUp() {
  const registered = new Map<string, string[]>();
  const reads: string[] = [];
  const verified: string[] = [];
  const real = createEd25519Verifier();
  const verifier: Ed25519Verifier = {
    engine: real.engine,
    verify(publicKeyHex, message, signature) {
      verified.push(publicKeyHex);
      return real.verify(publicKeyHex, message, signature);
    },
  };
  const signer = createSignatureAuthenticator({
    store: {
      publicKeys: async (userId) => {
        reads.push(userId);
        return registered.get(userId) ?? [];
      },
    },
    verifier,
    publicKeyCacheUsers: 10,
  });
  return { signer, registered, reads, verified };
}

const message = new TextEncoder().encode("a signed request");

async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ConnectError);
    return err;
  }
  assert.fail("expected a refusal");
}

describe("createSignatureAuthenticator", () => {
  it("names the registered key that signed, the canonical user id and the message's SHA-256", async () => {
    const { signer, registered } = setUp();
    const userId = randomUUID();
    const [first, second] = [await newKey(), await newKey()];
    registered.set(userId, [first.hex, second.hex]);
    const request = await signer.signedRequest(
      userId.toUpperCase(),
      message,
      await second.sign(message),
    );
    assert.deepEqual(request, {
      userId,
      signerPublicKey: second.hex,
      messageDigest: createHash("sha256").update(message).digest(),
    });
  });

  it("remembers a user's keys: the next request of the user reads nothing", async () => {
    const { signer, registered, reads } = setUp();
    const userId = randomUUID();
    const key = await newKey();
    registered.set(userId, [key.hex]);
    await signer.signedRequest(userId, message, await key.sign(message));
    await signer.signedRequest(userId, message, await key.sign(message));
    assert.deepEqual(reads, [userId]);
  });

  it("a key registered since: read, and only the keys not tried yet are verified", async () => {
    const { signer, registered, reads, verified } = setUp();
    const userId = randomUUID();
    const [old, added] = [await newKey(), await newKey()];
    registered.set(userId, [old.hex]);
    await signer.signedRequest(userId, message, await old.sign(message));
    registered.set(userId, [old.hex, added.hex]);
    verified.length = 0;
    const request = await signer.signedRequest(userId, message, await added.sign(message));
    assert.equal(request.signerPublicKey, added.hex);
    assert.deepEqual(reads, [userId, userId]);
    assert.deepEqual(verified, [old.hex, added.hex], "the remembered key once, then the new one");
  });

  it("a signature no key of the user made: Invalid signature", async () => {
    const { signer, registered } = setUp();
    const userId = randomUUID();
    registered.set(userId, [(await newKey()).hex]);
    const err = await refusal(
      signer.signedRequest(userId, message, await (await newKey()).sign(message)),
    );
    assert.equal(err.code, Code.Unauthenticated);
    assert.equal(err.rawMessage, "Invalid signature");
  });

  it("a user without keys costs one read and one verify, as a wrong signature does, and is not remembered", async () => {
    const { signer, reads, verified } = setUp();
    const userId = randomUUID();
    const signature = await (await newKey()).sign(message);
    for (let i = 0; i < 2; i++) {
      const err = await refusal(signer.signedRequest(userId, message, signature));
      assert.equal(err.rawMessage, "Invalid signature");
    }
    assert.deepEqual(reads, [userId, userId], "read each time: not remembered");
    assert.equal(verified.length, 2, "one verify each time, under a key nobody holds");
    assert.equal(verified[0], verified[1]);
    assert.match(verified[0] ?? "", /^[0-9a-f]{64}$/);
  });

  it("forgetKeys: the next request reads the keys again (a key revoked)", async () => {
    const { signer, registered, reads } = setUp();
    const userId = randomUUID();
    const key = await newKey();
    registered.set(userId, [key.hex]);
    await signer.signedRequest(userId, message, await key.sign(message));
    signer.forgetKeys(userId);
    await signer.signedRequest(userId, message, await key.sign(message));
    assert.deepEqual(reads, [userId, userId]);
  });
});
