import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  type CredentialsFileTrouble,
  readCredentialsFile,
  reloadCountedAs,
  watchCredentialsFile,
} from "../../../src/admin-auth/watched-credentials-file.js";
import { ConfigError } from "../../../src/config/config.js";
import { tempDirs } from "../../support/temp-dirs.js";

const sha = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** A reload outcome in a word: the count, "missing", or the refusal's message. */
function told(outcome: { entries: number } | CredentialsFileTrouble): string {
  if ("error" in outcome) {
    return outcome.error.message;
  }
  return "missing" in outcome ? "missing" : String(outcome.entries);
}

describe("readCredentialsFile", () => {
  const temp = tempDirs("perps-watched-credentials-");
  after(() => temp.removeAll());

  it("reads the entries, naming the file and variable", () => {
    const path = join(temp.make(), "ops");
    writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
    const read = readCredentialsFile(path, "SERVICE_CREDENTIALS_FILE");
    assert.equal(read.path, path);
    assert.equal(read.variable, "SERVICE_CREDENTIALS_FILE");
    assert.deepEqual(
      read.entries.map((e) => e.name),
      ["alice"],
    );
    assert.notEqual(read.version, "");
  });

  it("a missing file, or one others may write, is a ConfigError naming the variable", () => {
    const dir = temp.make();
    assert.throws(
      () => readCredentialsFile(join(dir, "none"), "ADMIN_CREDENTIALS_FILE"),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message === `ADMIN_CREDENTIALS_FILE: cannot read ${join(dir, "none")} (ENOENT)`,
    );
    const open = join(dir, "open");
    writeFileSync(open, `alice sha256:${sha("s1")}\n`);
    chmodSync(open, 0o666);
    assert.throws(
      () => readCredentialsFile(open, "ADMIN_CREDENTIALS_FILE"),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.startsWith(`ADMIN_CREDENTIALS_FILE: ${open} is writable by its group`),
    );
  });
});

describe("watchCredentialsFile", () => {
  const temp = tempDirs("perps-watched-credentials-");
  after(() => temp.removeAll());

  it("is re-read when it changes; a broken or others' writable file keeps the entries, a deleted one leaves none", async () => {
    const path = join(temp.make(), "live");
    writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
    const outcomes: string[] = [];
    const watched = watchCredentialsFile({
      file: readCredentialsFile(path, "ADMIN_CREDENTIALS_FILE"),
      watchIntervalMs: 20,
      onReload: (outcome) => outcomes.push(told(outcome)),
    });
    try {
      assert.equal(watched.nameOf("s1"), "alice");
      assert.equal(watched.nameOf("s2"), undefined);
      writeFileSync(path, `alice sha256:${sha("s1")}\nbob sha256:${sha("s2")}\n`);
      const deadline = Date.now() + 5000;
      while (watched.nameOf("s2") === undefined && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(watched.nameOf("s2"), "bob");
      assert.equal(outcomes.at(-1), "2");
      writeFileSync(path, "garbage\n");
      assert.throws(() => watched.reload(), ConfigError);
      assert.equal(watched.nameOf("s2"), "bob", "kept");
      assert.match(outcomes.at(-1) ?? "", /line 1/);
      // Writable by others: refused like a broken file, the entries kept.
      writeFileSync(path, `mallory sha256:${sha("s3")}\n`);
      chmodSync(path, 0o666);
      assert.throws(() => watched.reload(), /writable by its group or other users \(mode 0666\)/);
      assert.equal(watched.nameOf("s3"), undefined);
      assert.equal(watched.nameOf("s2"), "bob", "kept");
      // Deleted: no entry at all until the file is back.
      rmSync(path);
      const gone = Date.now() + 5000;
      while (watched.nameOf("s2") !== undefined && Date.now() < gone) {
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(watched.nameOf("s2"), undefined, "revoked");
      assert.equal(watched.nameOf("s1"), undefined, "revoked");
      assert.equal(outcomes.at(-1), "missing");
      writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
      watched.reload();
      assert.equal(watched.nameOf("s1"), "alice", "back with the file");
    } finally {
      watched.close();
    }
  });
});

describe("reloadCountedAs", () => {
  it("tells a holder its entries under its own name, and trouble as it came", () => {
    const seen: unknown[] = [];
    const onReload = reloadCountedAs("operators", (outcome) => seen.push(outcome));
    const error = new ConfigError("bad");
    onReload?.({ entries: 3 });
    onReload?.({ missing: "/f" });
    onReload?.({ error });
    assert.deepEqual(seen, [{ operators: 3 }, { missing: "/f" }, { error }]);
    assert.equal(reloadCountedAs("services", undefined), undefined);
  });
});
