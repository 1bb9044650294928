import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isMessage, type JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { matchPathTemplate } from "../../../src/rest/path-template.js";
import { transcodeRequest } from "../../../src/rest/request-transcoder.js";
import { RestError } from "../../../src/rest/rest-error.js";
import { restRoutesOfService } from "../../../src/rest/rest-route.js";
import {
  Color,
  type EchoRequest,
  EchoRequestSchema,
  GatewayTestService,
} from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

const routes = restRoutesOfService(GatewayTestService);

/**
 * The EchoRequest a call of `method` at `url` (path and query, raw) with
 * `body` transcodes to.
 */
function transcode(method: string, url: string, body?: JsonValue): EchoRequest {
  const [path = "", query = ""] = url.split("?");
  for (const route of routes.filter((r) => r.method.name === method)) {
    const variables = matchPathTemplate(route.template, path);
    if (variables !== undefined) {
      const message = transcodeRequest(route, {
        body,
        variables,
        query: new URLSearchParams(query),
      });
      assert.ok(isMessage(message, EchoRequestSchema));
      return message;
    }
  }
  assert.fail(`no route of ${method} matches ${path}`);
}

/** The message of the 400 INVALID_ARGUMENT that transcoding refuses with. */
function refusal(method: string, url: string, body?: JsonValue): string {
  try {
    transcode(method, url, body);
  } catch (e) {
    assert.ok(e instanceof RestError, String(e));
    assert.equal(e.code, Code.InvalidArgument);
    assert.equal(e.httpStatus, 400);
    return e.message;
  }
  assert.fail(`${method} ${url} was transcoded`);
}

describe("transcodeRequest: path variables and query", () => {
  it("sets path variables, nested ones included, percent-decoded", () => {
    const r = transcode("GetItem", "/v1/shelves/s%201/items/i%2F1");
    assert.equal(r.shelf, "s 1");
    assert.equal(r.item?.id, "i/1");
  });

  it("keeps an encoded slash of a multi-segment variable encoded", () => {
    assert.equal(transcode("GetFile", "/v1/files/a/b%2Fc/d%20e").path, "a/b%2Fc/d e");
  });

  it("sets the other fields from the query, by proto or JSON name, dotted into messages", () => {
    const r = transcode(
      "GetItem",
      "/v1/shelves/s/items/i?name=n&int64Value=9007199254740993&uint32_value=7&item.title=t&item.label.text=x",
    );
    assert.equal(r.name, "n");
    assert.equal(r.int64Value, 9007199254740993n);
    assert.equal(r.uint32Value, 7);
    assert.equal(r.item?.id, "i");
    assert.equal(r.item?.title, "t");
    assert.equal(r.item?.label?.text, "x");
  });

  it("adds a repeated parameter's every value, and reads enums by name or number", () => {
    const r = transcode(
      "GetItem",
      "/v1/shelves/s/items/i?tags=a&tags=b&numbers=1&numbers=-2&color=COLOR_GREEN&item.label.codes=3",
    );
    assert.deepEqual(r.tags, ["a", "b"]);
    assert.deepEqual(r.numbers, [1n, -2n]);
    assert.equal(r.color, Color.GREEN);
    assert.deepEqual(r.item?.label?.codes, [3]);
    assert.equal(transcode("GetItem", "/v1/shelves/s/items/i?color=1").color, Color.RED);
  });

  it("lets the path win over the query, and ignores unknown parameters", () => {
    const r = transcode("GetItem", "/v1/shelves/s/items/i?shelf=q&item.id=q&nope=1&item.nope=2");
    assert.equal(r.shelf, "s");
    assert.equal(r.item?.id, "i");
  });

  it("sets one field of a oneof, and refuses a second", () => {
    const r = transcode("GetItem", "/v1/shelves/s/items/i?choice_number=4");
    assert.deepEqual(r.choice, { case: "choiceNumber", value: 4 });
    assert.equal(
      refusal("GetItem", "/v1/shelves/s/items/i?choiceText=a&choiceNumber=4"),
      "choiceNumber: only one of the fields of choice may be set",
    );
  });

  it("refuses values that do not fit, naming the parameter", () => {
    const at = "/v1/shelves/s/items/i?";
    const refused: [string, string][] = [
      ["int32Value=1.5", "int32Value: must be an integer from -2147483648 to 2147483647"],
      ["bool_value=yes", "bool_value: must be true or false"],
      ["color=COLOR_BLUE", "color: must be one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN"],
      ["name=a&name=b", "name: must be given once"],
      ["item=x", "item: cannot be set from a URL"],
      ["counts=1", "counts: cannot be set from a URL"],
      ["items.id=x", "items.id: cannot be set from a URL"],
    ];
    for (const [query, message] of refused) {
      assert.equal(refusal("GetItem", at + query), message, query);
    }
  });

  it("refuses a path variable with broken percent-encoding", () => {
    assert.equal(
      refusal("GetItem", "/v1/shelves/%E0%A4/items/i"),
      "shelf: invalid percent-encoding in the URL path",
    );
  });
});

describe("transcodeRequest: bodies", () => {
  it('body "*": takes every field from the body, the query from nothing, the path over both', () => {
    const r = transcode("CancelItem", "/v1/shelves/s/items/i:cancel?name=q&tags=q", {
      name: "n",
      shelf: "b",
      item: { id: "b", title: "t", quantity: 3 },
    });
    assert.equal(r.name, "n");
    assert.deepEqual(r.tags, []);
    assert.equal(r.shelf, "s");
    assert.equal(r.item?.id, "i");
    assert.equal(r.item?.title, "t");
    assert.equal(r.item?.quantity, 3n);
  });

  it('body "*": refuses a missing body and a body that is not strict JSON of the message', () => {
    assert.equal(
      refusal("CancelItem", "/v1/shelves/s/items/i:cancel"),
      "request body must be a JSON object",
    );
    assert.equal(
      refusal("CancelItem", "/v1/shelves/s/items/i:cancel", { int64Value: "5" }),
      "int64Value: must be an integer JSON number",
    );
    assert.equal(
      refusal("CancelItem", "/v1/shelves/s/items/i:cancel", [1]),
      "request body must be a JSON object",
    );
  });

  it('body "<field>": the body is that field; the query sets the others, not that one', () => {
    const r = transcode("UpdateItem", "/v1/shelves/s/items/i?name=n&item.title=q", {
      title: "t",
      quantity: 2,
    });
    assert.equal(r.name, "n");
    assert.equal(r.shelf, "s");
    assert.equal(r.item?.id, "i");
    assert.equal(r.item?.title, "t");
    assert.equal(r.item?.quantity, 2n);
  });

  it('body "<field>": a repeated field takes a JSON array, and errors name the field', () => {
    assert.deepEqual(transcode("AddTags", "/v1/shelves/s/tags", ["a", "b"]).tags, ["a", "b"]);
    assert.equal(
      refusal("UpdateItem", "/v1/shelves/s/items/i", { title: 5 }),
      "item.title: must be a JSON string",
    );
    assert.equal(refusal("AddTags", "/v1/shelves/s/tags", [1]), "tags[0]: must be a JSON string");
  });

  it("no body: the message has only what the path and query set", () => {
    const r = transcode("DeleteItem", "/v1/shelves/s/items/i");
    assert.equal(r.shelf, "s");
    assert.equal(r.item?.id, "i");
    assert.equal(r.name, "");
    assert.equal(r.item?.title, "");
  });
});
