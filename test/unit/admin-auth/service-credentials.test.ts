import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { loadServiceCredentials } from "../../../src/admin-auth/service-credentials.js";
import { readCredentialsFile } from "../../../src/admin-auth/watched-credentials-file.js";
import { tempDirs } from "../../support/temp-dirs.js";

const sha = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

describe("loadServiceCredentials", () => {
  const temp = tempDirs("perps-service-credentials-");
  after(() => temp.removeAll());

  it("names the service of a secret, and tells each re-read as a count of services", () => {
    const path = join(temp.make(), "ops");
    writeFileSync(path, `edge sha256:${sha("s1")}\n`, { mode: 0o600 });
    const outcomes: unknown[] = [];
    const credentials = loadServiceCredentials({
      file: readCredentialsFile(path, "SERVICE_CREDENTIALS_FILE"),
      onReload: (outcome) => outcomes.push(outcome),
    });
    try {
      assert.equal(credentials.serviceOf("s1"), "edge");
      assert.equal(credentials.serviceOf("s2"), undefined);
      writeFileSync(path, `edge sha256:${sha("s1")}\nbilling sha256:${sha("s2")}\n`);
      credentials.reload();
      assert.equal(credentials.serviceOf("s2"), "billing");
      rmSync(path);
      credentials.reload();
      assert.equal(credentials.serviceOf("s1"), undefined);
      assert.deepEqual(outcomes, [{ services: 2 }, { missing: path }]);
    } finally {
      credentials.close();
    }
  });
});
