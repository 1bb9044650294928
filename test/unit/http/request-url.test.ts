import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NodeServerRequest } from "../../../src/http/node-handler.js";
import { requestAuthority, requestUrl, urlOf } from "../../../src/http/request-url.js";

const http1 = (host: string | undefined, encrypted?: boolean) =>
  ({
    headers: host === undefined ? {} : { host },
    url: "/v1/tokens?x=1",
    socket: encrypted === undefined ? {} : { encrypted },
  }) as unknown as NodeServerRequest;

const http2 = (authority: string) =>
  ({
    authority,
    headers: { host: "not-this" },
    url: "/perps.token.v1.TokenService/CreateToken",
    socket: { encrypted: true },
  }) as unknown as NodeServerRequest;

describe("requestAuthority", () => {
  it("HTTP/2's authority, HTTP/1's Host, undefined when it names none", () => {
    assert.equal(requestAuthority(http2("api.example:8443")), "api.example:8443");
    assert.equal(requestAuthority(http1("127.0.0.1:8080")), "127.0.0.1:8080");
    assert.equal(requestAuthority(http1(undefined)), undefined);
  });
});

describe("urlOf and requestUrl", () => {
  it("https over TLS, http otherwise, with the authority and the path as sent", () => {
    assert.equal(urlOf({ encrypted: true }, "a:1", "/p?q"), "https://a:1/p?q");
    assert.equal(urlOf({ encrypted: false }, "a:1", "/p"), "http://a:1/p");
    assert.equal(urlOf({}, "a:1", "/p"), "http://a:1/p");
    assert.equal(urlOf(undefined, "a:1", "/p"), "http://a:1/p");
    assert.equal(requestUrl(http1("h:8080")), "http://h:8080/v1/tokens?x=1");
    assert.equal(requestUrl(http1("h:8443", true)), "https://h:8443/v1/tokens?x=1");
    assert.equal(
      requestUrl(http2("h:9090")),
      "https://h:9090/perps.token.v1.TokenService/CreateToken",
    );
  });
});
