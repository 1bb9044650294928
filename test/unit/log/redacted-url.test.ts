import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redactedUrl } from "../../../src/log/redacted-url.js";

describe("redacted URL", () => {
  it("hides userinfo and query, keeps scheme, host, port and path", () => {
    assert.equal(
      redactedUrl("https://user:s3cret@collector.example:4318/v1/traces"),
      "https://[redacted]@collector.example:4318/v1/traces",
    );
    assert.equal(redactedUrl("http://s3cret@c:4318"), "http://[redacted]@c:4318");
    assert.equal(
      redactedUrl("http://u:p@ss@c/x"),
      "http://[redacted]@c/x",
      "the last @ ends userinfo",
    );
    assert.equal(
      redactedUrl("https://c.example/v1/traces?api_key=s3cret#f"),
      "https://c.example/v1/traces?[redacted]#f",
    );
    assert.equal(redactedUrl("http://collector:4318"), "http://collector:4318");
    assert.equal(redactedUrl("http://c/path@not-userinfo"), "http://c/path@not-userinfo");
  });

  it("redacts text that is no URL too (a configuration error quotes it)", () => {
    assert.equal(redactedUrl("user:s3cret@collector:4318"), "[redacted]@collector:4318");
    assert.equal(redactedUrl("ftp://u:s3cret@c"), "ftp://[redacted]@c");
    assert.equal(redactedUrl("collector:4318"), "collector:4318");
  });
});
