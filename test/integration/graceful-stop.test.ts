import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { startTestRedis, type TestRedis } from "../support/test-redis.js";
import { type TextAnswer, textAnswer } from "../support/text-answer.js";

// A stop that tells the watchers: on SIGTERM the real process says
// NOT_SERVING at once (/readyz, grpc.health.v1 Watch), ends the Watch
// streams, and exits without waiting out the grace period (10 s).

const GRACE_MS = 10_000;

/** GET `path` on the agent's one keep-alive connection. */
function get(agent: Agent, url: string): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      textAnswer(res).then(resolve, reject);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("graceful stop", () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    killMainProcesses();
    await redis?.dispose();
  });

  it("SIGTERM: Watch streams hear NOT_SERVING and end, /readyz turns 503, the process exits well before the grace period", {
    timeout: 30_000,
  }, async () => {
    const run = startMainProcess({ PUBLIC_PORT: "0", INTERNAL_PORT: "0", REDIS_URL: redis.url });
    const [match] = await run.waitFor(/"publicPort":(\d+),"internalPort":(\d+)/);
    const [publicPort, internalPort] = [match?.[1], match?.[2]];

    // A client-side balancer's watch, with grpc-js and the health proto of grpc-health-check.
    const Health = grpc.makeGenericClientConstructor(healthService, "Health");
    const client = new Health(`127.0.0.1:${internalPort}`, grpc.credentials.createInsecure());
    const call = client.watch({ service: "" }) as grpc.ClientReadableStream<{ status: string }>;
    const statuses: string[] = [];
    let toldNotServing: (() => void) | undefined;
    const notServing = new Promise<void>((resolve) => {
      toldNotServing = resolve;
    });
    const serving = new Promise<void>((resolve) => {
      call.on("data", (message: { status: string }) => {
        statuses.push(message.status);
        if (message.status === "SERVING") {
          resolve();
        } else if (message.status === "NOT_SERVING") {
          toldNotServing?.();
        }
      });
    });
    const ended = new Promise<grpc.StatusObject>((resolve, reject) => {
      call.on("status", resolve);
      call.on("error", reject);
    });

    // A balancer's HTTP probe, on a connection opened before the stop.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const readyz = `http://127.0.0.1:${publicPort}/readyz`;
    try {
      await serving;
      assert.equal((await get(agent, readyz)).status, 200);

      const signalled = Date.now();
      run.child.kill("SIGTERM");
      await notServing;
      // Told at once, before the listener closes: the probe on the open connection says so too.
      const probe = await get(agent, readyz);
      assert.equal(probe.status, 503, probe.body);
      assert.deepEqual(JSON.parse(probe.body), { status: "not ready" });

      const status = await ended;
      assert.equal(status.code, grpc.status.OK, status.details);
      assert.deepEqual(statuses, ["SERVING", "NOT_SERVING"]);

      assert.equal(await run.exitedWithin(GRACE_MS), 0, run.output());
      const took = Date.now() - signalled;
      // The HTTP/1.1 drain (500 ms) and closing Redis; not the grace period.
      assert.ok(took < 3000, `the stop took ${took} ms`);
      assert.match(run.output(), /"msg":"stopped"/);
    } finally {
      agent.destroy();
      client.close();
    }
  });
});
