import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  credentialLookup,
  credentialsLine,
  parseCredentialsFile,
} from "../../../src/admin-auth/credentials-file.js";
import { ConfigError } from "../../../src/config/config.js";

const sha = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

describe("ADMIN_CREDENTIALS_FILE", () => {
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

  it("credentialsLine writes a line the parser reads back", () => {
    const [entry] = parseCredentialsFile(`${credentialsLine("carol", sha("c"))}\n`, "f");
    assert.equal(entry?.name, "carol");
    assert.equal(entry?.sha256.toString("hex"), sha("c"));
  });
});
