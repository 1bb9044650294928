import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { outputShape } from "../../support/output-shape.js";

describe("outputShape (documented output against a run's)", () => {
  it("a mktemp -d folder is one kind wherever TMPDIR puts it", () => {
    assert.equal(
      outputShape("Private key: /tmp/tmp.Q2mfJ0vLxk/key.pem"),
      "Private key: <temp dir>/key.pem",
    );
    assert.equal(
      outputShape("Private key: /tmp/perps-doc-examples-x1/tmp/tmp.a8Kd0PzZ3q/key.pem"),
      "Private key: <temp dir>/key.pem",
    );
  });

  it("a folder that is not mktemp's stays as printed", () => {
    assert.equal(outputShape("/srv/perps/key.pem"), "/srv/perps/key.pem");
    assert.equal(outputShape("/tmp/tmp.short/key.pem"), "/tmp/tmp.short/key.pem");
  });

  it("values that vary from run to run are replaced by their kind", () => {
    assert.equal(
      outputShape(`{"id":"0PhOF2DOkM3iKWFL","expiresAt":"2026-11-23"}`),
      `{"id":"<id>","expiresAt":"<date>"}`,
    );
    assert.equal(outputShape("1795401308789 \n\n"), "<ms>");
  });
});
