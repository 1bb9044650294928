import type { BenchPhase } from "../bench-context.js";
import { measureTokenMemory } from "../redis-memory.js";

/** Redis memory per live token, session and named, written through the real store code (a Redis of its own). */
export const memoryPhase: BenchPhase = {
  name: "memory",
  needsService: false,
  async run(ctx) {
    const memory = await measureTokenMemory(ctx.plan.memoryUsers, ctx.plan.memoryTokensPerKind);
    ctx.log(`redis memory per token: ${JSON.stringify(memory)}`);
    return { memory };
  },
};
