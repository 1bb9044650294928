import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "@perps/token-client/contract/google/rpc/error_details_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { newUser } from "../../../../test/support/signing.js";
import { runCli } from "../../../src/cli/run-cli.js";
import { INFO, MESSAGE, TOKEN_ID } from "../../support/replayed-create.js";

// The answer to a replayed create: TOKEN_ID, MESSAGE and INFO (support/replayed-create.ts).

// A stand-in for the service that answers every create as it answers such a
// replay: Connect through connect-node, REST with the gateway's error body.
const handler = connectNodeAdapter({
  routes(router) {
    router.service(TokenService, {
      createToken() {
        throw new ConnectError(MESSAGE, Code.AlreadyExists, undefined, [
          { desc: ErrorInfoSchema, value: INFO },
        ]);
      },
      deleteToken() {
        throw new ConnectError("not used", Code.Unimplemented);
      },
    });
  },
  fallback(req, res) {
    req.resume();
    res.writeHead(409, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        code: Code.AlreadyExists,
        message: MESSAGE,
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", ...INFO }],
      }),
    );
  },
});

describe("perps-tokens create, when this request already created a token", () => {
  const server = http.createServer(handler);
  let url = "";
  let dir = "";
  let args: string[] = [];

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), "perps-cli-unit-"));
    const key = join(dir, "me.hex");
    writeFileSync(key, Buffer.from((await newUser()).secretKey).toString("hex"), { mode: 0o600 });
    args = ["create", "--user", randomUUID(), "--key", key, "--name", "n", "--url", url];
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(argv: string[]) {
    let stdout = "";
    let stderr = "";
    const code = await runCli(argv, {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      env: {},
    });
    return { code, stdout, stderr };
  }

  for (const transport of ["rest", "connect"]) {
    it(`${transport}: names the id and how to delete it; --json carries createdTokenId`, async () => {
      const http = transport === "rest" ? " (HTTP 409)" : "";
      const human = await run([...args, "--transport", transport]);
      assert.equal(human.code, 1);
      assert.equal(human.stdout, "");
      assert.equal(
        human.stderr,
        `perps-tokens: ALREADY_EXISTS${http}: ${MESSAGE}\n` +
          `This request had already been accepted: it created token ${TOKEN_ID}, whose secret cannot be shown again.\n` +
          `To free its name, delete it: perps-tokens delete --user USER_ID --key FILE --token-id ${TOKEN_ID}\n`,
      );

      const machine = await run([...args, "--transport", transport, "--json"]);
      assert.equal(machine.code, 1);
      assert.equal(machine.stdout, "");
      assert.deepEqual(JSON.parse(machine.stderr), {
        error: {
          kind: "service",
          code: Code.AlreadyExists,
          codeName: "ALREADY_EXISTS",
          message: MESSAGE,
          ...(transport === "rest" ? { httpStatus: 409 } : {}),
          createdTokenId: TOKEN_ID,
        },
      });
    });
  }
});
