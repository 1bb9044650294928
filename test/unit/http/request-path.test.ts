import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { requestPath } from "../../../src/http/request-path.js";

const request = (url: string | undefined) => ({ url }) as IncomingMessage;

describe("requestPath", () => {
  it("is the request target without its query", () => {
    assert.equal(requestPath(request("/v1/tokens?page=2&x=?")), "/v1/tokens");
    assert.equal(requestPath(request("/v1/tokens")), "/v1/tokens");
    assert.equal(requestPath(request("/?")), "/");
    assert.equal(requestPath(request(undefined)), "");
  });

  it("is worked out once per request: every later ask gets the same string", () => {
    const req = request("/healthz?verbose");
    const first = requestPath(req);
    req.url = "/changed";
    assert.equal(requestPath(req), first);
    assert.equal(requestPath(request("/changed")), "/changed");
  });
});
