import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { TEST_OPERATOR } from "../../test/support/test-operator.js";
import { cliSuite, cwd, json, publicKeyOfFile, run } from "./support/cli-runner.js";

// The tests use distinct users and key files, so they run side by side.
describe("perps-tokens (the bin of package.json)", { concurrency: true }, () => {
  cliSuite();

  it("list-keys and revoke-tokens: an operator's incident tools, as text or --json", async () => {
    const userId = randomUUID();
    const none = await run(["list-keys", "--user", userId]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "No keys.\n");
    assert.equal((await run(["list-keys", "--user", userId, "--json"])).stdout, "[]\n");

    await run(["keygen", "--out", "erin.pem"]);
    const publicKey = publicKeyOfFile(join(cwd, "erin.pem"));
    const before = Date.now();
    assert.equal((await run(["register-key", "--user", userId, "--key", "erin.pem"])).code, 0);
    const fingerprint = `SHA256:${createHash("sha256").update(Buffer.from(publicKey, "hex")).digest("base64").replace(/=+$/, "")}`;

    const listed = await run(["list-keys", "--user", userId]);
    assert.equal(listed.code, 0, listed.stderr);
    const [header, row, ...rest] = listed.stdout.trimEnd().split("\n");
    assert.deepEqual(rest, []);
    assert.match(header ?? "", /^ADDED \(UTC\) +FINGERPRINT +PUBLIC KEY$/);
    const cells = (row ?? "").split(/ {2,}/);
    assert.equal(cells.length, 3, row);
    assert.equal(cells[1], fingerprint);
    assert.equal(cells[2], publicKey);
    const added = Date.parse(cells[0] ?? "");
    assert.ok(added >= before - 1000 && added <= Date.now() + 1000, row);
    const listedJson = await run(["list-keys", "--user", userId, "--json"]);
    assert.deepEqual(JSON.parse(listedJson.stdout), [
      { publicKey, fingerprint, addedAt: cells[0] },
    ]);

    const tokens: string[] = [];
    for (const name of ["a", undefined]) {
      const made = await run([
        "create",
        "--user",
        userId,
        "--key",
        "erin.pem",
        "--json",
        ...(name === undefined ? [] : ["--name", name]),
      ]);
      assert.equal(made.code, 0, made.stderr);
      tokens.push(String(json(made.stdout).token));
    }
    const revoked = await run(["revoke-tokens", "--user", userId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `Revoked 2 live tokens of user ${userId}.\n`);
    for (const token of tokens) {
      assert.equal((await run(["introspect", token])).code, 3);
    }
    const again = await run(["revoke-tokens", "--user", userId, "--json"]);
    assert.deepEqual(json(again.stdout), { revokedTokens: 0, userId });

    const wrong = await run(["revoke-tokens"]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--user/);
    const refused = await run(["revoke-tokens", "--user", "nobody"]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^perps-tokens: INVALID_ARGUMENT: userId: /);
  });

  it("the admin commands send the operator's secret: flag, then env, then .data/redis/operator-secret here", async () => {
    const userId = randomUUID();
    const noSecret = { PERPS_TOKENS_OPERATOR_SECRET: "" };
    // Without any: the service's 401, saying what to send.
    const refused = await run(["list-keys", "--user", userId], noSecret);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /UNAUTHENTICATED: .*authorization: Bearer <operator secret>/);
    // A wrong secret in the environment: refused too; the right one in a file given by flag wins.
    writeFileSync(join(cwd, "operator.secret"), `${TEST_OPERATOR.secret}\n`, { mode: 0o600 });
    const wrongEnv = { PERPS_TOKENS_OPERATOR_SECRET: "op_not-an-operator" };
    assert.equal((await run(["list-keys", "--user", userId], wrongEnv)).code, 1);
    const byFlag = await run(
      ["list-keys", "--user", userId, "--operator-secret-file", "operator.secret"],
      wrongEnv,
    );
    assert.equal(byFlag.code, 0, byFlag.stderr);
    const missing = await run(
      ["list-keys", "--user", userId, "--operator-secret-file", "no-such.secret"],
      noSecret,
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read no-such\.secret/);
    // Where the service writes its generated operator, when run in this folder.
    const dataDir = join(cwd, ".data/redis");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "operator-secret"), `${TEST_OPERATOR.secret}\n`, { mode: 0o600 });
    try {
      const found = await run(["revoke-tokens", "--user", userId], noSecret);
      assert.equal(found.code, 0, found.stderr);
    } finally {
      rmSync(join(cwd, ".data"), { recursive: true, force: true });
    }
  });
});
