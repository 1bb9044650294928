import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pidInFile } from "../../../src/process/embedded-redis.js";
import { tempDirs } from "../../support/temp-dirs.js";

describe("pidInFile", () => {
  const temp = tempDirs("perps-pid-file-");
  after(() => temp.removeAll());

  it("the positive integer a pid file holds, spaces and newline aside", () => {
    const file = join(temp.make(), "redis.pid");
    writeFileSync(file, "4242\n");
    assert.equal(pidInFile(file), 4242);
    writeFileSync(file, "  17 ");
    assert.equal(pidInFile(file), 17);
  });

  it("undefined for a missing file, or one holding no positive integer", () => {
    const dir = temp.make();
    assert.equal(pidInFile(join(dir, "none.pid")), undefined);
    assert.equal(pidInFile(dir), undefined, "a folder");
    for (const text of ["", "0", "-5", "12.5", "abc", "99999999999999999999", "1 2"]) {
      writeFileSync(join(dir, "bad.pid"), text);
      assert.equal(pidInFile(join(dir, "bad.pid")), undefined, JSON.stringify(text));
    }
  });
});
