import { redisKeysOf } from "../src/store/keys.js";
import { createTokenStore } from "../src/store/token-store.js";
import { STORE_SETTINGS } from "../test/support/store-settings.js";
import { newBenchUsers } from "./bench-users.js";
import { startBenchRedis } from "./redis-server.js";
import { seedTokens } from "./seed-tokens.js";

export interface TokenMemory {
  users: number;
  tokensPerKind: number;
  /** used_memory growth per session token, replay entries of the creates included. */
  sessionBytesPerToken: number;
  namedBytesPerToken: number;
  /** The same once the creates' replay entries are forgotten (after 5 minutes): the lasting cost. */
  sessionBytesPerTokenSteady: number;
  namedBytesPerTokenSteady: number;
}

async function usedMemory(client: { info(section: string): Promise<string> }): Promise<number> {
  const info = await client.info("memory");
  const match = /^used_memory:(\d+)/m.exec(info);
  return Number(match?.[1] ?? "0");
}

/**
 * Redis memory per live token, in a fresh redis-server: INFO used_memory
 * before and after writing `tokensPerKind` session tokens, then as many named
 * ones, through the real store code. Users already have their key registered
 * before the first figure, so only what tokens add is counted.
 */
export async function measureTokenMemory(
  users: number,
  tokensPerKind: number,
): Promise<TokenMemory> {
  const redis = await startBenchRedis();
  try {
    const benchUsers = newBenchUsers(users);
    const pipeline = redis.client.pipeline();
    for (const user of benchUsers) {
      pipeline.sadd(redisKeysOf(user.userId).publicKeys, user.publicKeyHex);
    }
    await pipeline.exec();
    const store = createTokenStore({
      ...STORE_SETTINGS,
      redis: { client: redis.client },
      rateLimitPerMinute: 1_000_000,
      maxActivePerUser: 1_000_000,
    });
    const lifetimeMs = 3_600_000;
    const forgetReplays = async () => {
      const p = redis.client.pipeline();
      for (const user of benchUsers) {
        p.del(redisKeysOf(user.userId).replay);
      }
      await p.exec();
    };

    const start = await usedMemory(redis.client);
    await seedTokens({ store, users: benchUsers, count: tokensPerKind, named: false, lifetimeMs });
    const afterSession = await usedMemory(redis.client);
    await forgetReplays();
    const afterSessionSteady = await usedMemory(redis.client);
    await seedTokens({ store, users: benchUsers, count: tokensPerKind, named: true, lifetimeMs });
    const afterNamed = await usedMemory(redis.client);
    await forgetReplays();
    const afterNamedSteady = await usedMemory(redis.client);
    const per = (bytes: number) => Math.round(bytes / tokensPerKind);
    return {
      users,
      tokensPerKind,
      sessionBytesPerToken: per(afterSession - start),
      sessionBytesPerTokenSteady: per(afterSessionSteady - start),
      namedBytesPerToken: per(afterNamed - afterSessionSteady),
      namedBytesPerTokenSteady: per(afterNamedSteady - afterSessionSteady),
    };
  } finally {
    await redis.stop();
  }
}
