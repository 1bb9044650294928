import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { loadOperatorCredentials } from "../../../src/admin-auth/operator-credentials.js";
import { readCredentialsFile } from "../../../src/admin-auth/watched-credentials-file.js";
import { tempDirs } from "../../support/temp-dirs.js";

const sha = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

describe("loadOperatorCredentials", () => {
  const temp = tempDirs("perps-operator-credentials-");
  after(() => temp.removeAll());

  it("names the operator of a secret, and tells each re-read as a count of operators", () => {
    const path = join(temp.make(), "ops");
    writeFileSync(path, `alice sha256:${sha("s1")}\n`, { mode: 0o600 });
    const outcomes: unknown[] = [];
    const credentials = loadOperatorCredentials({
      file: readCredentialsFile(path, "ADMIN_CREDENTIALS_FILE"),
      onReload: (outcome) => outcomes.push(outcome),
    });
    try {
      assert.equal(credentials.operatorOf("s1"), "alice");
      assert.equal(credentials.operatorOf("s2"), undefined);
      writeFileSync(path, `alice sha256:${sha("s1")}\nbob sha256:${sha("s2")}\n`);
      credentials.reload();
      assert.equal(credentials.operatorOf("s2"), "bob");
      rmSync(path);
      credentials.reload();
      assert.equal(credentials.operatorOf("s1"), undefined);
      assert.deepEqual(outcomes, [{ operators: 2 }, { missing: path }]);
    } finally {
      credentials.close();
    }
  });
});
