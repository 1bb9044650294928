import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import type { NodeServerRequest } from "../../../src/http/node-handler.js";
import { createRouteTable } from "../../../src/rest/route-table.js";

/** Only what a match reads of a request: its method and target. */
function request(method: string, url: string): NodeServerRequest {
  return { method, url } as NodeServerRequest;
}

describe("createRouteTable: matchRequest", () => {
  const table = createRouteTable(TokenService.methods);

  it("matches a request's method and path as match() does", () => {
    const match = table.matchRequest(request("POST", "/user/tokens?x=1"));
    assert.equal(match.kind, "found");
    assert.equal(match.kind === "found" ? match.route.method.name : "", "CreateToken");
    assert.deepEqual(table.matchRequest(request("PUT", "/user/tokens")), {
      kind: "method-not-allowed",
      allow: ["DELETE", "GET", "POST"],
    });
    assert.deepEqual(table.matchRequest(request("GET", "/nowhere")), { kind: "not-found" });
  });

  it("works a request out once: the second ask gets the same match", () => {
    const req = request("DELETE", "/user/tokens");
    assert.equal(table.matchRequest(req), table.matchRequest(req));
    assert.notEqual(table.matchRequest(request("DELETE", "/user/tokens")), table.matchRequest(req));
  });

  it("keeps each table's match apart on one request", () => {
    const req = request("POST", "/user/tokens");
    const empty = createRouteTable([]);
    assert.equal(table.matchRequest(req).kind, "found");
    assert.equal(empty.matchRequest(req).kind, "not-found");
    assert.equal(table.matchRequest(req).kind, "found");
  });
});
