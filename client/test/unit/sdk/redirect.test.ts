import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { newUser, type TestUser } from "../../../../test/support/signing.js";
import { TokenApiError } from "../../../src/sdk/token-api-error.js";
import { createTokenClient, type TokenTransport } from "../../../src/sdk/token-client.js";

interface Received {
  method: string;
  path: string;
  body: string;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString();
}

// A real redirect to a real second server, which records what reaches it and
// answers like the service would, so a client that follows would "succeed".
describe("the SDK never follows a redirect with a signed request", () => {
  const received: Received[] = [];
  const target = createServer(async (req, res) => {
    received.push({ method: req.method ?? "", path: req.url ?? "", body: await bodyOf(req) });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "AAAAAAAAAAAAAAAA", token: "pt_x", expiresAt: "2030-01-01" }));
  });
  let targetUrl = "";
  let status = 307;
  const redirector = createServer((req, res) => {
    // Drained, not read: what matters is whether the body goes on to the target.
    req.resume();
    res.writeHead(status, { location: `${targetUrl}${req.url ?? ""}` });
    res.end();
  });
  let redirectorUrl = "";
  let user: TestUser;

  before(async () => {
    targetUrl = await listen(target);
    redirectorUrl = await listen(redirector);
    user = await newUser();
  });
  after(async () => {
    await close(redirector);
    await close(target);
  });

  const transports: TokenTransport[] = ["rest", "connect"];
  for (const transport of transports) {
    for (const code of [307, 308]) {
      it(`${transport}: HTTP ${code} is an UNKNOWN error naming the redirect; the target gets nothing`, async () => {
        status = code;
        received.length = 0;
        const client = createTokenClient({
          baseUrl: redirectorUrl,
          transport,
          signer: { privateKey: user.secretKey },
        });
        const refused = (err: unknown) => {
          assert.ok(err instanceof TokenApiError, `not a TokenApiError: ${String(err)}`);
          assert.equal(err.code, Code.Unknown);
          assert.match(
            err.message,
            new RegExp(
              `^refused to follow HTTP ${code} from ${redirectorUrl}/\\S+ to ${targetUrl}/`,
            ),
          );
          assert.equal(err.httpStatus, transport === "rest" ? code : undefined);
          return true;
        };
        await assert.rejects(client.createToken({ userId: user.userId, name: "n" }), refused);
        await assert.rejects(
          client.deleteToken({ userId: user.userId, tokenId: "AAAAAAAAAAAAAAAA" }),
          refused,
        );
        // Nor does a bearer token go on to another host.
        await assert.rejects(client.listTokens("pt_a-bearer-token"), refused);
        client.close();
        assert.deepEqual(received, []);
      });
    }
  }
});
