import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  credentialLookup,
  parseCredentialsFile,
} from "../../../src/admin-auth/credentials-file.js";
import { ensureGeneratedOperator } from "../../../src/admin-auth/generated-operator.js";
import { loadOperatorCredentials } from "../../../src/admin-auth/operator-credentials.js";
import { readCredentialsFile } from "../../../src/admin-auth/watched-credentials-file.js";
import { ConfigError } from "../../../src/config/config.js";

const sha = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

describe("ADMIN_CREDENTIALS_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), "perps-credentials-unit-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("one operator a line, # comments and blank lines allowed, hex of any case", () => {
    const text = `# operators\n\nalice sha256:${sha("a")}\n  bob\tsha256:${sha("b").toUpperCase()}  \r\n`;
    const entries = parseCredentialsFile(text, "f");
    assert.deepEqual(
      entries.map((e) => [e.name, e.sha256.toString("hex")]),
      [
        ["alice", sha("a")],
        ["bob", sha("b")],
      ],
    );
  });

  it("a line that does not match, or a name given twice, is a ConfigError naming the line, not its text", () => {
    for (const [text, line] of [
      [`alice sha256:${sha("a")}\nbob op_secret-pasted\n`, 2],
      [`alice sha256:${sha("a").slice(1)}\n`, 1],
      [`alice sha1:${sha("a")}\n`, 1],
      [`al ice sha256:${sha("a")}\n`, 1],
      [`# x\nalice sha256:${sha("a")}\nalice sha256:${sha("b")}\n`, 3],
    ] as const) {
      assert.throws(
        () => parseCredentialsFile(text, "/etc/ops"),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.message.startsWith(`ADMIN_CREDENTIALS_FILE /etc/ops line ${line}: `) &&
          !err.message.includes("op_secret"),
      );
    }
  });

  it("the lookup names the operator of a secret, and no one for another", () => {
    const lookup = credentialLookup(
      parseCredentialsFile(`alice sha256:${sha("s1")}\nbob sha256:${sha("s2")}\n`, "f"),
    );
    assert.equal(lookup("s1"), "alice");
    assert.equal(lookup("s2"), "bob");
    assert.equal(lookup("s3"), undefined);
    assert.equal(lookup(""), undefined);
    assert.equal(credentialLookup([])("s1"), undefined);
  });

  it("is re-read when it changes; a broken or others' writable file keeps the operators, a deleted one leaves none", async () => {
    const path = join(dir, "live");
    writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
    const told: string[] = [];
    const credentials = loadOperatorCredentials({
      file: readCredentialsFile(path, "ADMIN_CREDENTIALS_FILE"),
      watchIntervalMs: 20,
      onReload: (outcome) =>
        told.push(
          "error" in outcome
            ? outcome.error.message
            : "missing" in outcome
              ? "missing"
              : String(outcome.operators),
        ),
    });
    try {
      assert.equal(credentials.operatorOf("s2"), undefined);
      writeFileSync(path, `alice sha256:${sha("s1")}\nbob sha256:${sha("s2")}\n`);
      const deadline = Date.now() + 5000;
      while (credentials.operatorOf("s2") === undefined && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(credentials.operatorOf("s2"), "bob");
      writeFileSync(path, "garbage\n");
      assert.throws(() => credentials.reload(), ConfigError);
      assert.equal(credentials.operatorOf("s2"), "bob", "kept");
      assert.match(told.at(-1) ?? "", /line 1/);
      // Writable by others: refused like a broken file, the operators kept.
      writeFileSync(path, `mallory sha256:${sha("s3")}\n`);
      chmodSync(path, 0o666);
      assert.throws(
        () => credentials.reload(),
        /writable by its group or other users \(mode 0666\)/,
      );
      assert.equal(credentials.operatorOf("s3"), undefined);
      assert.equal(credentials.operatorOf("s2"), "bob", "kept");
      // Deleted: no operator at all until the file is back.
      rmSync(path);
      const gone = Date.now() + 5000;
      while (credentials.operatorOf("s2") !== undefined && Date.now() < gone) {
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(credentials.operatorOf("s2"), undefined, "revoked");
      assert.equal(credentials.operatorOf("s1"), undefined, "revoked");
      assert.equal(told.at(-1), "missing");
      writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
      credentials.reload();
      assert.equal(credentials.operatorOf("s1"), "alice", "back with the file");
    } finally {
      credentials.close();
    }
  });

  it("the generated operator: written once (secret 0600), reused after, one winner when starts race", () => {
    const folder = join(dir, "data", "redis");
    const first = ensureGeneratedOperator(folder);
    assert.equal(first.created, true);
    assert.equal(statSync(first.secretFile).mode & 0o777, 0o600);
    const secret = readFileSync(first.secretFile, "utf8").trim();
    const lookup = credentialLookup(
      parseCredentialsFile(readFileSync(first.credentialsFile, "utf8"), "f"),
    );
    assert.equal(lookup(secret), "local");
    const again = ensureGeneratedOperator(folder);
    assert.equal(again.created, false);
    assert.equal(readFileSync(first.secretFile, "utf8").trim(), secret);
    // Racing starts in one folder: exactly one writes, and the secret matches the file.
    const raced = join(dir, "raced");
    const outcomes = Array.from({ length: 5 }, () => ensureGeneratedOperator(raced).created);
    assert.equal(outcomes.filter(Boolean).length, 1);
  });
});
