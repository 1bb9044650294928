import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { createLogger } from "../../../src/log/logger.js";

describe("logger", () => {
  it("redacts secrets passed by mistake, at the top level and one level down", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ destination });
    logger.info(
      {
        token: "pt_secret",
        signature: "ab".repeat(64),
        req: { signature: "cd".repeat(64), privateKey: "k", token: "pt_other" },
        headers: { authorization: "Bearer pt_third" },
        userId: "kept",
      },
      "oops",
    );
    assert.equal(lines.length, 1);
    const line = lines[0] ?? "";
    for (const secret of ["pt_secret", "ab".repeat(64), "cd".repeat(64), "pt_other", "pt_third"]) {
      assert.ok(!line.includes(secret), `${secret} leaked: ${line}`);
    }
    assert.match(line, /"userId":"kept"/);
    assert.match(line, /\[redacted\]/);
  });
});
