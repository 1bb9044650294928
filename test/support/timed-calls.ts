import assert from "node:assert/strict";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { restJson } from "./rest-json.js";
import { newUser, signedCreate, type TestUser } from "./signing.js";
import { createOperatorGrpcClient } from "./test-operator.js";
import type { TestService } from "./test-service.js";

// Calls for fault tests: each answer with its status and how long it took.

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface Answer {
  status: number;
  ms: number;
  token?: string;
}

/** A signed create over REST; `n` makes each call's message distinct. */
export async function create(
  service: TestService,
  user: TestUser,
  n: number,
  name?: string,
): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${service.publicUrl}/user/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: restJson(
      await signedCreate(user, {
        timestamp: BigInt(Date.now() + n),
        ...(name === undefined ? {} : { name }),
      }),
    ),
  });
  const body = (await res.json()) as { token?: string };
  return {
    status: res.status,
    ms: performance.now() - started,
    ...(body.token === undefined ? {} : { token: body.token }),
  };
}

/** IntrospectToken over Connect: 200 with `active` for a live token, 503 while Redis is away. */
export async function check(
  service: TestService,
  token: string,
): Promise<Answer & { active: boolean }> {
  const started = performance.now();
  const res = await fetch(
    `${service.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    },
  );
  const body = (await res.json()) as { active?: boolean };
  return { status: res.status, ms: performance.now() - started, active: body.active === true };
}

export async function register(service: TestService, user: TestUser): Promise<void> {
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  try {
    await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
  } finally {
    keys.close();
  }
}

/** A new user registered on the service, and the live token of its first create. */
export async function liveToken(service: TestService): Promise<{ user: TestUser; token: string }> {
  const user = await newUser();
  await register(service, user);
  const created = await create(service, user, 0);
  assert.equal(created.status, 201);
  return { user, token: created.token ?? "" };
}

/**
 * Calls `call` every 50 ms until it answers 200, for at most `limitMs`;
 * every answer meanwhile must be 503 and come within `answerMs`.
 * Resolves with the time from `since` to the first 200.
 */
export async function recovery(
  since: number,
  limitMs: number,
  answerMs: number,
  call: (n: number) => Promise<Answer>,
): Promise<number> {
  for (let n = 0; Date.now() - since < limitMs; n++) {
    const answer = await call(n);
    assert.ok(answer.ms < answerMs, `an answer took ${Math.round(answer.ms)} ms`);
    if (answer.status === 200 || answer.status === 201) {
      return Date.now() - since;
    }
    assert.equal(answer.status, 503);
    await sleep(50);
  }
  return assert.fail(`no success within ${limitMs} ms`);
}
