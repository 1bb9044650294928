import assert from "node:assert/strict";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { newUser, type TestUser } from "../../../test/support/signing.js";
import { suiteValue } from "../../../test/support/suite-value.js";
import { createOperatorGrpcClient } from "../../../test/support/test-operator.js";
import { startTestRedis, type TestRedis } from "../../../test/support/test-redis.js";
import { startTestService, type TestService } from "../../../test/support/test-service.js";
import {
  type Code,
  createTokenClient,
  TokenApiError,
  type TokenClientOptions,
  type TokenTransport,
} from "../../src/sdk/node.js";

// The service and SDK clients of the SDK suites (sdk*.test.ts).

export const TRANSPORTS: readonly TokenTransport[] = ["rest", "connect", "grpc"];

export interface Harness {
  service: TestService;
  /** A user with a fresh key registered on the internal listener. */
  user(): Promise<TestUser>;
  /** A client of the public listener signing with the user's private key. */
  client(
    transport: TokenTransport,
    user: TestUser,
    opts?: Partial<TokenClientOptions>,
  ): ReturnType<typeof createTokenClient>;
  close(): Promise<void>;
}

export async function harness(limits: { maxActive?: number } = {}): Promise<Harness> {
  const redis: TestRedis = await startTestRedis();
  const service = await startTestService({
    redisUrl: redis.url,
    ...(limits.maxActive === undefined ? {} : { tokenMaxActivePerUser: limits.maxActive }),
  });
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  const clients: ReturnType<typeof createTokenClient>[] = [];
  return {
    service,
    async user() {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      return user;
    },
    client(transport, user, opts = {}) {
      const client = createTokenClient({
        baseUrl: service.publicUrl,
        transport,
        signer: { privateKey: user.secretKey },
        ...opts,
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) {
        client.close();
      }
      keys.close();
      await service.stop();
      await redis.dispose();
    },
  };
}

/** An assert.rejects predicate: a TokenApiError with this code, message and HTTP status. */
export function apiError(code: Code, message: string | RegExp, httpStatus?: number) {
  return (err: unknown) => {
    assert.ok(err instanceof TokenApiError, `not a TokenApiError: ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === "string") {
      assert.equal(err.message, message);
    } else {
      assert.match(err.message, message);
    }
    assert.equal(err.httpStatus, httpStatus);
    return true;
  };
}

/** The UTC date `seconds` from now, at both ends of the call (a call may straddle midnight). */
export function datesIn(seconds: number, from: number, to: number): string[] {
  return [from, to].map((t) => new Date(t + seconds * 1000).toISOString().slice(0, 10));
}

/**
 * A harness for the tests of the calling describe: started before its first
 * test, closed after its last.
 */
export function harnessSuite(limits: { maxActive?: number } = {}): Harness {
  return suiteValue("harness", () => harness(limits));
}
