import { describe, it } from "node:test";
import { killMainProcesses } from "../support/main-process.js";
import {
  assertNoneLost,
  registeredUsers,
  retryingCallers,
  sleep,
  startRetriedService,
  type Tally,
  UNDO_BUDGET_MS,
} from "../support/retried-creates.js";
import { startTestRedisSentinel } from "../support/test-redis-sentinel.js";

// Issue 40, through Sentinel failovers: the service as a process, every write
// confirmed by the replica (REDIS_MIN_REPLICAS_ACK=1, so that a create
// answered 201 survives its primary's death), the primary killed with
// SIGKILL and the killed server brought back as the new primary's replica,
// while callers retry every 503 with the same body byte for byte. Every
// create answered 201 must exist at the end. (The sentinel starts no
// failover within 9 s of the last: hence few rounds.)

const ROUNDS = 3;
const CALLERS = 8;

describe("acknowledged creates through Sentinel failovers and retries", () => {
  it(`${ROUNDS} failovers under retried creates: every 201 stays`, async () => {
    const sentinel = await startTestRedisSentinel();
    try {
      const [address] = sentinel.topology.sentinels;
      const service = await startRetriedService({
        REDIS_SENTINELS: `${address?.host}:${address?.port}`,
        REDIS_SENTINEL_NAME: sentinel.topology.name,
        REDIS_MIN_REPLICAS_ACK: "1",
      });
      const users = await registeredUsers(service.internalAddress, CALLERS);
      let running = true;
      const tally: Tally = { created: [], statuses: new Map() };
      const callers = retryingCallers(service.publicUrl, users, () => running, tally);
      for (let round = 1; round <= ROUNDS; round++) {
        await sleep(1000);
        const { rejoin } = await sentinel.failOver();
        await rejoin();
      }
      await sleep(1000);
      running = false;
      await callers;
      await sleep(UNDO_BUDGET_MS);
      await assertNoneLost(await sentinel.currentPrimaryPort(), service.internalUrl, tally, ROUNDS);
    } finally {
      killMainProcesses();
      await sentinel.dispose();
    }
  });
});
