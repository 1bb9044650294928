import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { TokenAdminService } from "@perps/token-client/contract/perps/token/v1/token_admin_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import {
  adminAuthInterceptor,
  operatorKey,
} from "../../../src/admin-auth/admin-auth-interceptor.js";

type Next = Parameters<ReturnType<typeof adminAuthInterceptor>>[0];
type Request = Parameters<Next>[0];

function request(
  service: typeof TokenService | typeof TokenAdminService,
  authorization?: string,
  more: Record<string, string> = {},
) {
  const header = new Headers({
    ...(authorization === undefined ? {} : { authorization }),
    ...more,
  });
  return {
    service,
    header,
    contextValues: createContextValues(),
  } as unknown as Request;
}

describe("adminAuthInterceptor", () => {
  const interceptor = adminAuthInterceptor({
    operatorOf: (secret) => (secret === "right" ? "alice" : undefined),
    adminServices: [TokenAdminService],
  });
  const seen: string[] = [];
  const next: Next = async (req) => {
    seen.push(req.contextValues.get(operatorKey));
    return {} as Awaited<ReturnType<Next>>;
  };

  it("lets a non-admin call through without a credential", async () => {
    await interceptor(next)(request(TokenService));
    assert.equal(seen.at(-1), "");
  });

  it("refuses an admin call without a known operator's secret: UNAUTHENTICATED, saying what to send", async () => {
    for (const authorization of [undefined, "Bearer wrong", "Bearer", "Basic cmlnaHQ="]) {
      await assert.rejects(
        interceptor(next)(request(TokenAdminService, authorization)),
        (err: unknown) =>
          err instanceof ConnectError &&
          err.code === Code.Unauthenticated &&
          err.rawMessage.includes('send "authorization: Bearer <operator secret>"') &&
          !err.rawMessage.includes("wrong"),
      );
    }
  });

  it("refuses an admin call carrying Origin, even with the operator's secret: PERMISSION_DENIED", async () => {
    await assert.rejects(
      interceptor(next)(request(TokenAdminService, "Bearer right", { origin: "http://x" })),
      (err: unknown) => err instanceof ConnectError && err.code === Code.PermissionDenied,
    );
    await interceptor(next)(request(TokenService, undefined, { origin: "http://x" }));
  });

  it("lets the operator's call through, carrying the operator's name", async () => {
    await interceptor(next)(request(TokenAdminService, "bearer right"));
    assert.equal(seen.at(-1), "alice");
  });
});
