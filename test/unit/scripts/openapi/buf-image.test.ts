import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { readBufImage } from "../../../../scripts/openapi/buf-image.js";

const repository = new URL("../../../../", import.meta.url);

/** The leading comment `buf build` recorded for the first declaration of a file, if any. */
function firstLeadingComment(registry: ReturnType<typeof readBufImage>, fileName: string) {
  const file = registry.getFile(fileName);
  assert.ok(file, fileName);
  return file.proto.sourceCodeInfo?.location.find((l) => l.leadingComments !== "")?.leadingComments;
}

describe("readBufImage", () => {
  it("builds this repository's proto/perps by default, with the source info generated code lacks", () => {
    const image = readBufImage();
    assert.ok(image.getService("perps.token.v1.TokenService"));
    assert.ok(image.getService("perps.token.v1.TokenAdminService"));
    // What the files import comes with them.
    assert.ok(image.getFile("google/api/http.proto"));
    assert.equal(image.getService("perps.gatewaytest.v1.GatewayTestService"), undefined);
    const file = image.getFile("perps/token/v1/token.proto");
    assert.ok((file?.proto.sourceCodeInfo?.location.length ?? 0) > 0);
  });

  it("builds the paths it is given", () => {
    const image = readBufImage({ workspace: repository, paths: ["test/proto/perps"] });
    assert.ok(image.getService("perps.gatewaytest.v1.GatewayTestService"));
    assert.equal(image.getService("perps.token.v1.TokenService"), undefined);
  });

  describe("in another workspace", () => {
    const dir = mkdtempSync(join(tmpdir(), "buf-image-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, "x", "v1"), { recursive: true });
    writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
    writeFileSync(
      join(dir, "x", "v1", "thing.proto"),
      'syntax = "proto3";\n\npackage x.v1;\n\n// A thing of the test.\nmessage Thing {\n  string id = 1;\n}\n',
    );

    it("takes the workspace as a path or a file URL", () => {
      for (const workspace of [dir, pathToFileURL(`${dir}/`)]) {
        const image = readBufImage({ workspace, paths: ["x"] });
        assert.ok(image.getMessage("x.v1.Thing"));
        assert.equal(firstLeadingComment(image, "x/v1/thing.proto"), " A thing of the test.\n");
      }
    });
  });
});
