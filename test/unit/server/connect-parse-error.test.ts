import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { TokenService } from "../../../src/gen/perps/token/v1/token_pb.js";

describe("a malformed protobuf request (connect patched by scripts/patch-connect.mjs)", () => {
  const server = createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(TokenService, {
          createToken: () => ({ expiresAt: "", id: "", token: "" }),
          deleteToken: () => ({}),
        }),
    }),
  );
  let url = "";
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const bytes of [[0xff], [0x0a], [0x07], [0x0a, 0x01, 0xff]]) {
    it(`is INVALID_ARGUMENT, not INTERNAL: bytes ${bytes.join(",")}`, async () => {
      const res = await fetch(`${url}/perps.token.v1.TokenService/CreateToken`, {
        method: "POST",
        headers: { "content-type": "application/proto" },
        body: new Uint8Array(bytes),
      });
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 400);
      assert.equal(body.code, "invalid_argument");
      assert.match(body.message, /^parse binary: /);
    });
  }
});
