// The floor of the create path on this machine: the least any server of the
// contract must do per REST create, with the same runtime and libraries as the
// service and nothing else. node:http, the JSON body parsed, the signature
// checked on libuv's thread pool (parsed key cached), one EVALSHA through
// ioredis (auto-pipelined, with a command timeout) that stores the token's
// digest with its expiry, and the JSON answer. No validation, request id, log
// line, metrics, protobuf, replay or rate check: `npm run bench` runs it under
// the same load as the service, so the difference between the two is what
// those cost.
//
// Started by the bench like the service (prints the same "listening" line);
// env: REDIS_URL, FLOOR_KEYS_FILE (JSON object: user id → public key hex).
import { createPublicKey, hash, type KeyObject, randomBytes, verify } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { listenAsFloor } from "./shared-listen.js";

interface CreateBody {
  userId: string;
  timestamp: number;
  expiresIn: number;
  signature: string;
}

/** The client with the one script this server defines (kept off ioredis' shared types). */
type FloorRedis = Redis & {
  floorCreate(key: string, digest: string, ttlMs: string): Promise<[number, number]>;
};

const verifyOnPool = promisify(verify);
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const { REDIS_URL, FLOOR_KEYS_FILE } = process.env;
if (REDIS_URL === undefined || FLOOR_KEYS_FILE === undefined) {
  throw new Error("REDIS_URL and FLOOR_KEYS_FILE are required");
}
const publicKeys = new Map<string, KeyObject>();
const registered = JSON.parse(readFileSync(FLOOR_KEYS_FILE, "utf8")) as Record<string, string>;
for (const [userId, hex] of Object.entries(registered)) {
  const der = Buffer.concat([SPKI_PREFIX, Buffer.from(hex, "hex")]);
  publicKeys.set(userId, createPublicKey({ key: der, format: "der", type: "spki" }));
}
const redis = new Redis(REDIS_URL, {
  enableAutoPipelining: true,
  commandTimeout: 1000,
  maxRetriesPerRequest: 0,
}) as FloorRedis;
redis.defineCommand("floorCreate", {
  numberOfKeys: 1,
  lua: "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return {1, 0}",
});

async function createToken(text: string): Promise<string | undefined> {
  const body = JSON.parse(text) as CreateBody;
  const key = publicKeys.get(body.userId);
  const message = Buffer.from(`createToken:${body.timestamp}:${body.expiresIn}::${body.userId}`);
  const signature = Buffer.from(body.signature, "hex");
  if (key === undefined || !(await verifyOnPool(null, message, key, signature))) {
    return undefined;
  }
  const token = randomBytes(32).toString("base64url");
  const id = randomBytes(12).toString("base64url");
  const ttlMs = body.expiresIn * 1000;
  await redis.floorCreate(`{${body.userId}}t${id}`, hash("sha256", token), String(ttlMs));
  return JSON.stringify({ expiresAt: new Date(Date.now() + ttlMs).toISOString(), id, token });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    createToken(Buffer.concat(chunks).toString("utf8")).then(
      (answer) => {
        if (answer === undefined) {
          res.writeHead(401).end();
          return;
        }
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(answer),
        });
        res.end(answer);
      },
      () => res.writeHead(500).end(),
    );
  });
});
// As many processes as the service has workers share the port (bench/process-group.ts).
await listenAsFloor(server, () => {
  redis.disconnect();
  server.closeAllConnections();
});
