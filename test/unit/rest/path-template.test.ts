import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  compareTemplates,
  decodeVariable,
  matchPathTemplate,
  parsePathTemplate,
} from "../../../src/rest/path-template.js";

/** Matches and decodes: field path → value, or undefined for no match. */
function bind(template: string, path: string): Record<string, string> | undefined {
  const vars = matchPathTemplate(parsePathTemplate(template), path);
  return vars && Object.fromEntries(vars.map((v) => [v.fieldPath.join("."), decodeVariable(v)]));
}

describe("parsePathTemplate", () => {
  it("parses literals, variables, wildcards and the verb", () => {
    const t = parsePathTemplate("/v1/{name=shelves/*/books/**}:cancel");
    assert.equal(t.verb, "cancel");
    assert.deepEqual(t.segments, [
      { kind: "literal", value: "v1" },
      { kind: "literal", value: "shelves" },
      { kind: "single" },
      { kind: "literal", value: "books" },
      { kind: "multi" },
    ]);
    assert.deepEqual(t.variables, [{ fieldPath: ["name"], start: 1, end: 5 }]);
  });

  it("treats {var} as {var=*} and keeps dotted field paths", () => {
    const t = parsePathTemplate("/a/{item.id}");
    assert.deepEqual(t.segments[1], { kind: "single" });
    assert.deepEqual(t.variables, [{ fieldPath: ["item", "id"], start: 1, end: 2 }]);
    assert.equal(t.verb, undefined);
  });

  const invalid: [string, RegExp][] = [
    ["v1/a", /must start with \//],
    ["/v1/**/a", /\*\* must be the last segment/],
    ["/v1/{a", /unbalanced braces/],
    ["/v1/{a={b}}", /must not nest/],
    ["/v1/{a-b}", /bad field path/],
    ["/v1/{a}/{a}", /bound twice/],
    ["/v1//a", /bad segment/],
    ["/v1/a b", /bad segment/],
    ["/v1/a:", /bad verb/],
  ];
  for (const [template, error] of invalid) {
    it(`rejects ${template}`, () => {
      assert.throws(() => parsePathTemplate(template), error);
    });
  }
});

describe("matchPathTemplate", () => {
  const cases: [string, string, Record<string, string> | undefined][] = [
    ["/v1/shelves/{shelf}", "/v1/shelves/s1", { shelf: "s1" }],
    ["/v1/shelves/{shelf}", "/v1/shelves/a%2Fb%20c", { shelf: "a/b c" }],
    ["/v1/shelves/{shelf}", "/v1/shelves/", undefined],
    ["/v1/shelves/{shelf}", "/v1/shelves/a/b", undefined],
    ["/v1/shelves/{shelf}", "/v1/shelves", undefined],
    ["/v1/{a.b}/{c}", "/v1/x/y", { "a.b": "x", c: "y" }],
    ["/v1/{name=shelves/*}", "/v1/shelves/a%2Fb%20c", { name: "shelves/a%2Fb c" }],
    ["/v1/{name=shelves/*}", "/v1/books/a", undefined],
    ["/v1/{path=**}", "/v1/a/b/c", { path: "a/b/c" }],
    ["/v1/{path=**}", "/v1", { path: "" }],
    ["/v1/{path=**}:get", "/v1/a/b:get", { path: "a/b" }],
    ["/v1/*/x", "/v1/anything/x", {}],
    ["/v1/**", "/v1/a/b", {}],
    ["/v1/{id}:cancel", "/v1/7:cancel", { id: "7" }],
    ["/v1/{id}:cancel", "/v1/7", undefined],
    ["/v1/{id}", "/v1/7:cancel", { id: "7:cancel" }],
    ["/v1/items", "/v1/it%65ms", {}],
    ["/v1/items", "/v1/items/", undefined],
    ["/v1/items", "v1/items", undefined],
  ];
  for (const [template, path, expected] of cases) {
    it(`${template} ~ ${path}`, () => {
      assert.deepEqual(bind(template, path), expected);
    });
  }

  it("throws URIError when decoding a malformed variable", () => {
    const vars = matchPathTemplate(parsePathTemplate("/v1/{id}"), "/v1/%E0%A4%A");
    assert.ok(vars?.[0]);
    assert.throws(() => decodeVariable(vars[0]), URIError);
  });
});

describe("compareTemplates", () => {
  it("orders literals before variables before **, and verbs first", () => {
    const sorted = ["/v1/{path=**}", "/v1/{id}", "/v1/{id}:cancel", "/v1/special", "/v1"]
      .map(parsePathTemplate)
      .sort(compareTemplates)
      .map((t) => t.source);
    assert.deepEqual(sorted, [
      "/v1",
      "/v1/special",
      "/v1/{id}:cancel",
      "/v1/{id}",
      "/v1/{path=**}",
    ]);
  });
});
