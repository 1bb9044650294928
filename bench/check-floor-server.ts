// The floor of a token check on this machine: node:http answering 200 after
// one Redis GET of the key the service reads for that token, nothing else.
// The token's user and id come from the token itself (parseToken, as the
// service does), the key is theirs (`{tag}t<id>`, src/redis/keys.ts); no
// digest comparison, expiry check, request id, log line or metrics.
// `npm run bench` runs it under the same load as forward-auth, so the
// difference between the two is what those cost.
//
// Started by the bench like the service (prints the same "listening" line);
// env: REDIS_URL.
import { createServer } from "node:http";
import { Redis } from "ioredis";
import { redisKeysOf } from "../src/redis/keys.js";
import { parseToken } from "../src/token/token-secret.js";

const { REDIS_URL } = process.env;
if (REDIS_URL === undefined) {
  throw new Error("REDIS_URL is required");
}
const redis = new Redis(REDIS_URL, {
  enableAutoPipelining: true,
  commandTimeout: 1000,
  maxRetriesPerRequest: 0,
});

const server = createServer((req, res) => {
  const parsed = parseToken(req.headers.authorization?.slice("Bearer ".length) ?? "");
  if (parsed === undefined) {
    res.writeHead(401, { "content-length": 0 }).end();
    return;
  }
  redis.getBuffer(redisKeysOf(parsed.userKey).token(parsed.tokenId)).then(
    // An unknown token is refused, so a bench that sends dead tokens sees errors.
    (record) => res.writeHead(record === null ? 401 : 200, { "content-length": 0 }).end(),
    () => res.writeHead(503, { "content-length": 0 }).end(),
  );
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", httpPort: port, grpcPort: port })}\n`);
});
process.once("SIGTERM", () => {
  server.close();
  redis.disconnect();
  server.closeAllConnections();
});
