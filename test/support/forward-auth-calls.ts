import assert from "node:assert/strict";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import type { RedisTopology } from "../../src/redis/redis-topology.js";
import { restJson } from "./rest-json.js";
import { signedCreate, signedDelete, type TestUser } from "./signing.js";
import { createOperatorGrpcClient } from "./test-operator.js";

// Calls and answer checks of the forward-auth suites (forward-auth*.test.ts).

export const MISSING = 'Bearer realm="perps-tokens"';
export const INVALID = 'Bearer realm="perps-tokens", error="invalid_token"';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Created {
  id: string;
  token: string;
}

export async function register(
  service: { internalAddress: string },
  user: TestUser,
): Promise<void> {
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  try {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
  } finally {
    keys.close();
  }
}

let nextTimestamp = Date.now();

export async function createToken(
  publicUrl: string,
  user: TestUser,
  fields: { name?: string; expiresIn?: bigint; scopes?: string[]; allowedIps?: string[] } = {},
): Promise<Created> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: restJson(await signedCreate(user, { ...fields, timestamp: BigInt(nextTimestamp++) })),
  });
  const body = (await res.json()) as Partial<Created>;
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.ok(body.id !== undefined && body.token !== undefined);
  return { id: body.id, token: body.token };
}

export async function deleteToken(
  publicUrl: string,
  user: TestUser,
  tokenId: string,
): Promise<void> {
  const res = await fetch(`${publicUrl}/user/tokens`, {
    method: "DELETE",
    headers: { "content-type": "application/json" },
    body: restJson(await signedDelete(user, tokenId, { timestamp: BigInt(nextTimestamp++) })),
  });
  assert.equal(res.status, 200, await res.text());
}

export interface AuthAnswer {
  status: number;
  headers: Headers;
  body: string;
}

export async function forwardAuth(
  baseUrl: string,
  init: { path?: string; method?: string; authorization?: string; body?: string } = {},
): Promise<AuthAnswer> {
  const res = await fetch(`${baseUrl}${init.path ?? "/auth"}`, {
    method: init.method ?? "GET",
    headers: init.authorization === undefined ? {} : { authorization: init.authorization },
    ...(init.body === undefined ? {} : { body: init.body }),
    // A hang is a failure, not a stuck suite.
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

export const bearer = (token: string) => `Bearer ${token}`;

export function assertAllowed(answer: AuthAnswer, userId: string, tokenId: string): void {
  assert.equal(answer.status, 200, answer.body);
  assert.equal(answer.headers.get("x-user-id"), userId.toLowerCase());
  assert.equal(answer.headers.get("x-token-id"), tokenId);
  assert.equal(answer.headers.get("cache-control"), "no-store");
  assert.equal(answer.body, "");
}

export function assertRefused(answer: AuthAnswer, challenge: string, head = false): void {
  assert.equal(answer.status, 401, answer.body);
  assert.equal(answer.headers.get("www-authenticate"), challenge);
  assert.equal(answer.headers.get("x-user-id"), null);
  assert.equal(answer.headers.get("x-token-id"), null);
  if (head) {
    assert.equal(answer.body, "");
    return;
  }
  assert.equal(answer.headers.get("content-type"), "application/json");
  const body = JSON.parse(answer.body) as { code: number; message: string; details: unknown[] };
  assert.equal(body.code, 16);
  assert.equal(typeof body.message, "string");
  assert.notEqual(body.message, "");
  assert.deepEqual(body.details, []);
}

/** The environment that points `npm start`'s command at this Redis. */
export function redisEnv(topology: RedisTopology): Record<string, string> {
  switch (topology.kind) {
    case "url":
      return { REDIS_URL: topology.url };
    case "cluster":
      return { REDIS_CLUSTER_NODES: topology.nodes.map((n) => `${n.host}:${n.port}`).join(",") };
    default:
      throw new Error(`no environment for a ${topology.kind} Redis here`);
  }
}
