import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  credentialLookup,
  parseCredentialsFile,
} from "../../../src/admin-auth/credentials-file.js";
import {
  ensureGeneratedOperator,
  GENERATED_CREDENTIALS_FILE,
  GENERATED_OPERATOR,
  GENERATED_SECRET_FILE,
} from "../../../src/admin-auth/generated-operator.js";
import { tempDirs } from "../../support/temp-dirs.js";

describe("ensureGeneratedOperator", () => {
  const temp = tempDirs("perps-generated-operator-");
  after(() => temp.removeAll());

  it("written once (secret 0600), reused after, one winner when starts race", () => {
    const dir = temp.make();
    const folder = join(dir, "data", "redis");
    const first = ensureGeneratedOperator(folder);
    assert.equal(first.created, true);
    assert.equal(first.credentialsFile, join(folder, GENERATED_CREDENTIALS_FILE));
    assert.equal(first.secretFile, join(folder, GENERATED_SECRET_FILE));
    assert.equal(statSync(first.secretFile).mode & 0o777, 0o600);
    const secret = readFileSync(first.secretFile, "utf8").trim();
    const lookup = credentialLookup(
      parseCredentialsFile(readFileSync(first.credentialsFile, "utf8"), "f"),
    );
    assert.equal(lookup(secret), GENERATED_OPERATOR);
    const again = ensureGeneratedOperator(folder);
    assert.equal(again.created, false);
    assert.equal(readFileSync(first.secretFile, "utf8").trim(), secret);
    // Racing starts in one folder: exactly one writes, and the secret matches the file.
    const raced = join(dir, "raced");
    const outcomes = Array.from({ length: 5 }, () => ensureGeneratedOperator(raced).created);
    assert.equal(outcomes.filter(Boolean).length, 1);
    const racedLookup = credentialLookup(
      parseCredentialsFile(readFileSync(join(raced, GENERATED_CREDENTIALS_FILE), "utf8"), "f"),
    );
    const racedSecret = readFileSync(join(raced, GENERATED_SECRET_FILE), "utf8").trim();
    assert.equal(racedLookup(racedSecret), GENERATED_OPERATOR);
  });
});
