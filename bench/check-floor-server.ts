// The floor of a token check on this machine: node:http answering 200 after
// one Redis GET of the key the service reads for that token, nothing else.
// The token's user and id come from the token itself (parseToken, as the
// service does), the key is theirs (`{tag}t<id>`, src/store/keys.ts); no
// digest comparison, expiry check, request id, log line or metrics.
// `npm run bench` runs it under the same load as forward-auth, so the
// difference between the two is what those cost.
//
// Its second port speaks h2c gRPC the same way (the IntrospectTokenRequest's
// token read straight from its bytes, a one-field answer, grpc-status 0), so
// the run can tell node:http2's share of IntrospectToken from the service's.
//
// Started by the bench like the service (prints the same "listening" line:
// publicPort HTTP/1.1, internalPort h2c gRPC); env: REDIS_URL.
import { createServer } from "node:http";
import { createServer as createH2cServer } from "node:http2";
import { parseToken } from "@perps/token-client/protocol";
import { Redis } from "ioredis";
import { redisKeysOf } from "../src/store/keys.js";
import { listenShared, portFromEnv } from "./shared-listen.js";

const { REDIS_URL } = process.env;
if (REDIS_URL === undefined) {
  throw new Error("REDIS_URL is required");
}
const redis = new Redis(REDIS_URL, {
  enableAutoPipelining: true,
  commandTimeout: 1000,
  maxRetriesPerRequest: 0,
});

/** Whether the token's record exists: one GET of its key (undefined: malformed, no call). */
function tokenExists(token: string): Promise<boolean> | undefined {
  const parsed = parseToken(token);
  return parsed === undefined
    ? undefined
    : redis.getBuffer(redisKeysOf(parsed.userId).token(parsed.tokenId)).then((r) => r !== null);
}

const server = createServer((req, res) => {
  const answer = (status: number) => res.writeHead(status, { "content-length": 0 }).end();
  const exists = tokenExists(req.headers.authorization?.slice("Bearer ".length) ?? "");
  if (exists === undefined) {
    answer(401);
    return;
  }
  // An unknown token is refused, so a bench that sends dead tokens sees errors.
  exists.then(
    (found) => answer(found ? 200 : 401),
    () => answer(503),
  );
});

// gRPC answers: `active: true` (field 1, varint 1) in one frame when found, the empty message if not.
const FOUND = Buffer.of(0, 0, 0, 0, 2, 0x08, 0x01);
const NOT_FOUND = Buffer.of(0, 0, 0, 0, 0);
const h2c = createH2cServer();
h2c.on("stream", (stream) => {
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("error", () => {});
  stream.on("end", () => {
    const body = Buffer.concat(chunks);
    // Frame header (5 bytes), then field 1's tag (0x0a) and a one-byte length: tokens are short.
    const length = body[6] ?? 0;
    const exists =
      body[5] === 0x0a ? tokenExists(body.toString("latin1", 7, 7 + length)) : undefined;
    const reply = (found: boolean, status: string) => {
      if (stream.destroyed) {
        return;
      }
      stream.respond(
        { ":status": 200, "content-type": "application/grpc" },
        { waitForTrailers: true },
      );
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": status }));
      stream.end(found ? FOUND : NOT_FOUND);
    };
    if (exists === undefined) {
      reply(false, "0");
      return;
    }
    exists.then(
      (found) => reply(found, "0"),
      () => reply(false, "14"),
    );
  });
});

// As many processes as the service has workers share the ports (bench/process-group.ts).
const publicPort = await listenShared(server, portFromEnv(process.env.PUBLIC_PORT));
const internalPort = await listenShared(h2c, portFromEnv(process.env.INTERNAL_PORT));
process.stdout.write(`${JSON.stringify({ msg: "listening", publicPort, internalPort })}\n`);
process.once("SIGTERM", () => {
  server.close();
  h2c.close();
  redis.disconnect();
  server.closeAllConnections();
  // Open HTTP/2 sessions would keep the process alive.
  process.exit(0);
});
