import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import * as ed from "@noble/ed25519";
import { createEd25519Verifier, type Ed25519Engine } from "../../../src/crypto/ed25519-verifier.js";

interface WycheproofFile {
  testGroups: {
    publicKey: { pk: string };
    tests: { tcId: number; comment: string; msg: string; sig: string; result: string }[];
  }[];
}

const vectors = JSON.parse(
  readFileSync(new URL("../../data/wycheproof-ed25519.json", import.meta.url), "utf8"),
) as WycheproofFile;

const hex = (s: string) => new Uint8Array(Buffer.from(s, "hex"));
const engines: Ed25519Engine[] = ["sodium", "openssl"];

describe("Ed25519 verifier engine", () => {
  it("is libsodium by default, where sodium-native loads (it does on every CI platform)", () => {
    assert.equal(createEd25519Verifier().engine, "sodium");
    assert.equal(createEd25519Verifier({ engine: "openssl" }).engine, "openssl");
  });
});

for (const engine of engines) {
  describe(`Ed25519 verifier (${engine}) against Wycheproof`, () => {
    const verifier = createEd25519Verifier({ engine });
    const cases = vectors.testGroups.flatMap((g) =>
      g.tests.map((t) => ({ pk: g.publicKey.pk, t })),
    );

    it("has all 151 vectors", () => {
      assert.equal(cases.length, 151);
      assert.equal(cases.filter((c) => c.t.result === "valid").length, 88);
    });

    for (const { pk, t } of cases) {
      it(`tc${t.tcId} ${t.result}: ${t.comment || "plain"}`, () => {
        assert.equal(verifier.verify(pk, hex(t.msg), hex(t.sig)), t.result === "valid");
      });
    }
  });

  describe(`Ed25519 verifier (${engine}) cross-checked with @noble/ed25519`, () => {
    it("agrees with noble on fresh keys and tampered messages", async () => {
      const verifier = createEd25519Verifier({ engine, keyCacheSize: 2 });
      for (let i = 0; i < 5; i++) {
        const { secretKey, publicKey } = await ed.keygenAsync();
        const message = new TextEncoder().encode(
          `createToken:${i}:::00000000-0000-0000-0000-000000000000`,
        );
        const signature = await ed.signAsync(message, secretKey);
        const pkHex = Buffer.from(publicKey).toString("hex");
        assert.equal(verifier.verify(pkHex, message, signature), true);
        assert.equal(await ed.verifyAsync(signature, message, publicKey), true);
        const tampered = message.slice();
        tampered[0] ^= 1;
        assert.equal(verifier.verify(pkHex, tampered, signature), false);
        assert.equal(await ed.verifyAsync(signature, tampered, publicKey), false);
      }
    });

    it("refuses signatures of the wrong length and unparsable keys without throwing", () => {
      const verifier = createEd25519Verifier({ engine });
      const pk = vectors.testGroups[0]?.publicKey.pk ?? "";
      assert.equal(verifier.verify(pk, new Uint8Array(1), new Uint8Array(63)), false);
      assert.equal(verifier.verify(pk, new Uint8Array(1), new Uint8Array(65)), false);
      assert.equal(verifier.verify("zz", new Uint8Array(1), new Uint8Array(64)), false);
      assert.equal(verifier.verify(`${pk}00`, new Uint8Array(1), new Uint8Array(64)), false);
    });
  });
}
