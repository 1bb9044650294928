import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { median } from "../../bench/median.js";
import { newUser, signedCreate } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

const WARM_UP_PAIRS = 100;
const PAIRS = 400;
/** Largest accepted gap between the two medians, as a share of the larger one. */
const TOLERANCE = 0.1;

// Finding 3: an unknown user must not answer faster than a known user with a
// wrong signature. Both calls go through the real service and a real Redis;
// pairs alternate strictly (and which one goes first alternates too), so a
// busy machine slows both sides alike, and medians ignore the outliers.
describe("timing does not tell which users have keys", () => {
  let redis: TestRedis;
  let service: TestService;
  let tokens: ReturnType<typeof createClient<typeof TokenService>>;

  before(async () => {
    redis = await startTestRedisServer();
    service = await startTestService({ redisUrl: redis.url });
    tokens = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "2" }),
    );
  });

  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  it(`unknown user vs known user with a wrong signature: medians within ${TOLERANCE * 100}%`, async (t) => {
    const known = await newUser();
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    try {
      await keys.putUserKey({ userId: known.userId, publicKey: known.publicKey });
    } finally {
      keys.close();
    }
    // A valid signature by a key that is not the user's.
    const forger = await newUser(known.userId);
    const unknown = await newUser();
    const wrongSignature = await signedCreate(forger, { timestamp: BigInt(Date.now()) + 60_000n });
    const noSuchUser = await signedCreate(unknown, { timestamp: BigInt(Date.now()) + 60_000n });

    async function timed(req: typeof wrongSignature): Promise<number> {
      const start = process.hrtime.bigint();
      try {
        await tokens.createToken(req);
      } catch (err) {
        const elapsed = Number(process.hrtime.bigint() - start);
        assert.ok(
          err instanceof ConnectError &&
            err.code === Code.Unauthenticated &&
            err.rawMessage === "Invalid signature",
          String(err),
        );
        return elapsed;
      }
      return assert.fail("a forged request was accepted");
    }

    async function measure(pairs: number) {
      const samples = { unknown: [] as number[], wrongSignature: [] as number[] };
      for (let i = 0; i < pairs; i++) {
        if (i % 2 === 0) {
          samples.unknown.push(await timed(noSuchUser));
          samples.wrongSignature.push(await timed(wrongSignature));
        } else {
          samples.wrongSignature.push(await timed(wrongSignature));
          samples.unknown.push(await timed(noSuchUser));
        }
      }
      const unknownMedian = median(samples.unknown);
      const wrongMedian = median(samples.wrongSignature);
      const gap = Math.abs(unknownMedian - wrongMedian) / Math.max(unknownMedian, wrongMedian);
      return { unknownMedian, wrongMedian, gap };
    }

    await measure(WARM_UP_PAIRS);
    // One retry: a burst of load from elsewhere can skew one run, not two.
    let result = await measure(PAIRS);
    if (result.gap > TOLERANCE) {
      result = await measure(PAIRS);
    }
    const report = `unknown user ${Math.round(result.unknownMedian / 1000)} µs, wrong signature ${Math.round(result.wrongMedian / 1000)} µs (gap ${(result.gap * 100).toFixed(1)}%)`;
    t.diagnostic(report);
    assert.ok(result.gap <= TOLERANCE, report);
  });
});
