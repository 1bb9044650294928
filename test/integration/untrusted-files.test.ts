import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { redisServersIn } from "../support/process-table.js";
import { newUser } from "../support/signing.js";
import { tempDirs } from "../support/temp-dirs.js";
import { credentialsText, operatorHeaders, TEST_OPERATOR } from "../support/test-operator.js";

// A credentials file or data folder another user could write is refused, as
// ssh refuses such an authorized_keys: whoever writes it chooses the operators.
// Real files, modes and owners (as root, `nobody` owns the planted ones).

const CONFIG_ERROR = 2;
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

describe("credential files and data folders others could write are refused", () => {
  const temp = tempDirs("perps-untrusted-");
  after(() => {
    killMainProcesses();
    temp.removeAll();
  });

  /** A start with `env` ends with exit 2 and a `Configuration error` line matching `says`; nothing started. */
  async function refused(env: Record<string, string>, says: RegExp, dataDir: string) {
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", ...env });
    assert.equal(await run.exitedWithin(10_000), CONFIG_ERROR, run.output());
    assert.match(run.output(), says);
    assert.doesNotMatch(run.output(), /\n\s+at /, "no stack");
    assert.deepEqual(redisServersIn(dataDir), [], "no Redis started");
  }

  const operators = (folder: string, mode = 0o600) => {
    const file = join(folder, "operators");
    writeFileSync(file, credentialsText([TEST_OPERATOR]), { mode });
    chmodSync(file, mode);
    return file;
  };

  it("ADMIN_CREDENTIALS_FILE and SERVICE_CREDENTIALS_FILE writable by group or others, or in a folder others may write", async () => {
    const base = temp.make();
    const dataDir = join(base, "redis");
    const writable = operators(base, 0o666);
    await refused(
      { ADMIN_CREDENTIALS_FILE: writable, EMBEDDED_REDIS_DIR: dataDir },
      new RegExp(
        `^Configuration error: ADMIN_CREDENTIALS_FILE: ${writable} is writable by its group or other users \\(mode 0666\\); only this service's user`,
        "m",
      ),
      dataDir,
    );
    const groupWritable = operators(temp.make(), 0o620);
    await refused(
      { SERVICE_CREDENTIALS_FILE: groupWritable, EMBEDDED_REDIS_DIR: dataDir },
      /^Configuration error: SERVICE_CREDENTIALS_FILE: .* is writable by its group or other users \(mode 0620\)/m,
      dataDir,
    );
    // A private file in a shared folder (not sticky): anyone may rename another file over it.
    const shared = temp.make();
    chmodSync(shared, 0o777);
    const inShared = operators(shared);
    await refused(
      { ADMIN_CREDENTIALS_FILE: inShared, EMBEDDED_REDIS_DIR: dataDir },
      new RegExp(
        `ADMIN_CREDENTIALS_FILE: ${inShared} is in ${shared}, which its group or other users may write \\(mode 0777\\)`,
      ),
      dataDir,
    );
    // Sticky (as /tmp): others cannot replace it there, so it is fine.
    chmodSync(shared, 0o1777);
    const run = startMainProcess({
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      ADMIN_CREDENTIALS_FILE: inShared,
      EMBEDDED_REDIS_DIR: dataDir,
    });
    await run.waitFor(/"msg":"listening"/);
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0, run.output());
  });

  it("a credentials file or data folder owned by another user: a planted operator is never trusted", async (t) => {
    if (!isRoot) {
      t.skip("needs root to give files to another user (nobody)");
      return;
    }
    const base = temp.make();
    const dataDir = join(base, "redis");
    const planted = operators(base);
    chownSync(planted, NOBODY, NOBODY);
    await refused(
      { ADMIN_CREDENTIALS_FILE: planted, EMBEDDED_REDIS_DIR: dataDir },
      new RegExp(
        `ADMIN_CREDENTIALS_FILE: ${planted} is owned by uid ${NOBODY}, not by this service's user or root`,
      ),
      dataDir,
    );
    // The attack: a shared writable data folder where another user wrote
    // admin-credentials before the first start, to become operator `local`.
    const shared = join(temp.make(), "redis");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const plantedHere = join(shared, "admin-credentials");
    writeFileSync(plantedHere, credentialsText([{ name: "local", secret: "op_planted" }]));
    chownSync(plantedHere, NOBODY, NOBODY);
    await refused(
      { ADMIN_CREDENTIALS_FILE: "", EMBEDDED_REDIS_DIR: shared },
      new RegExp(
        `^Configuration error: EMBEDDED_REDIS_DIR: the data folder ${shared} is writable by its group or other users \\(mode 0777\\)`,
        "m",
      ),
      shared,
    );
    // The folder made private again, the planted file still there: refused by its owner.
    chmodSync(shared, 0o700);
    await refused(
      { ADMIN_CREDENTIALS_FILE: "", EMBEDDED_REDIS_DIR: shared },
      new RegExp(`ADMIN_CREDENTIALS_FILE: ${plantedHere} is owned by uid ${NOBODY}`),
      shared,
    );
    // A data folder that is another user's.
    chownSync(shared, NOBODY, NOBODY);
    rmSync(plantedHere);
    await refused(
      { ADMIN_CREDENTIALS_FILE: "", EMBEDDED_REDIS_DIR: shared },
      new RegExp(`EMBEDDED_REDIS_DIR: the data folder ${shared} is owned by uid ${NOBODY}`),
      shared,
    );
  });

  it("while running: a file made writable by others is refused (operators kept); a deleted file revokes every operator until it is back", async () => {
    const base = temp.make();
    const file = operators(base);
    const run = startMainProcess({
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
      ADMIN_CREDENTIALS_FILE: file,
      EMBEDDED_REDIS_DIR: join(base, "redis"),
      // One process, so that each re-read is one log line.
      WORKERS: "1",
    });
    const [ports] = await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    const user = await newUser();
    const putKey = () =>
      fetch(`http://127.0.0.1:${ports?.[2]}/perps.token.v1.UserKeyService/PutUserKey`, {
        method: "POST",
        headers: { "content-type": "application/json", ...operatorHeaders() },
        body: JSON.stringify({ userId: user.userId, publicKey: user.publicKey }),
      }).then((res) => res.status);
    assert.equal(await putKey(), 200);
    chmodSync(file, 0o666);
    await run.waitFor(/"msg":"credentials file refused; operators kept"/);
    assert.match(run.output(), /writable by its group or other users \(mode 0666\)/);
    assert.equal(await putKey(), 200, "kept");
    chmodSync(file, 0o600);
    await run.waitFor(/"msg":"credentials file read"/);
    // Deleted: no operator at all, said in an error line.
    const aside = join(base, "operators.aside");
    renameSync(file, aside);
    await run.waitFor(
      /"level":50,[^\n]*"msg":"credentials file deleted; no operators until it is back"/,
    );
    assert.equal(await putKey(), 401, "revoked");
    renameSync(aside, file);
    await run.waitFor(/"msg":"credentials file read"/, 2);
    assert.equal(await putKey(), 200, "back with the file");
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0, run.output());
  });
});
