import assert from "node:assert/strict";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { untrustedReason } from "../../../src/config/trusted-path.js";
import { tempDirs } from "../../support/temp-dirs.js";

// Owners are not varied: that needs a second user. The modes are what a
// careless install gets wrong (a 0666 file, a 0777 folder).
describe("untrustedReason", () => {
  const temp = tempDirs("perps-trusted-path-");
  after(() => temp.removeAll());

  /** A file of `mode` in a new folder of `folderMode`. */
  function fileIn(folderMode: number, mode: number): { folder: string; file: string } {
    const folder = join(temp.make(), "folder");
    mkdirSync(folder);
    chmodSync(folder, folderMode);
    const file = join(folder, "secrets");
    writeFileSync(file, "x\n");
    chmodSync(file, mode);
    return { folder, file };
  }

  it("trusts this user's file, writable by no one else, in a folder only it may write", () => {
    const { folder, file } = fileIn(0o700, 0o600);
    assert.equal(untrustedReason(file, "file"), undefined);
    assert.equal(untrustedReason(folder, "folder"), undefined);
    assert.equal(untrustedReason(fileIn(0o755, 0o644).file, "file"), undefined);
  });

  it("refuses a file or folder its group or others may write, saying its mode", () => {
    assert.equal(
      untrustedReason(fileIn(0o700, 0o666).file, "file"),
      "is writable by its group or other users (mode 0666)",
    );
    assert.equal(
      untrustedReason(fileIn(0o700, 0o620).file, "file"),
      "is writable by its group or other users (mode 0620)",
    );
    const { folder } = fileIn(0o777, 0o600);
    assert.equal(
      untrustedReason(folder, "folder"),
      "is writable by its group or other users (mode 0777)",
    );
  });

  it("refuses a file in a folder others may write, unless the folder is sticky (as /tmp)", () => {
    const open = fileIn(0o777, 0o600);
    assert.equal(
      untrustedReason(open.file, "file"),
      `is in ${open.folder}, which its group or other users may write (mode 0777)`,
    );
    assert.equal(untrustedReason(fileIn(0o1777, 0o600).file, "file"), undefined);
    const both = fileIn(0o770, 0o646);
    assert.equal(
      untrustedReason(both.file, "file"),
      `is writable by its group or other users (mode 0646) and is in ${both.folder}, which its group or other users may write (mode 0770)`,
    );
  });

  it("judges the file a symlink leads to, where it is", () => {
    const target = fileIn(0o777, 0o600);
    const link = join(temp.make(), "link");
    symlinkSync(target.file, link);
    assert.match(untrustedReason(link, "file") ?? "", new RegExp(`^is in ${target.folder},`));
    const good = fileIn(0o700, 0o600);
    const goodLink = join(temp.make(), "good-link");
    symlinkSync(good.file, goodLink);
    assert.equal(untrustedReason(goodLink, "file"), undefined);
  });

  it("throws for a path that is not there (the callers say which variable named it)", () => {
    assert.throws(() => untrustedReason(join(temp.make(), "none"), "file"), { code: "ENOENT" });
  });
});
