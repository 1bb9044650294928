import assert from "node:assert/strict";
import { after, it } from "node:test";
import { killMainProcesses, startScript } from "../support/main-process.js";

after(killMainProcesses);

it("a worker gone before the primary's reply does not end the primary (EPIPE is handled)", async () => {
  // Four workers each leave a reply with nowhere to go: unhandled, the first
  // EPIPE ended the primary with exit code 1 (seen in CI, node 24, when a
  // worker lost the port race of WORKERS=2 and exited before cluster's reply
  // for its other port).
  const primary = startScript("test/support/gone-worker-primary.ts", { GONE_WORKERS: "4" });
  assert.equal(await primary.exitedWithin(30_000), 0, primary.output());
  const output = primary.output();
  assert.match(output, /gave up: a worker exited with code 3/);
  assert.match(output, /held until 4 workers had exited/);
  assert.match(output, /all 4 workers exited/);
  assert.doesNotMatch(output, /Unhandled 'error' event/);
  // The failed replies were seen and logged, not silently lost: the race happened.
  assert.match(output, /"msg":"message to a worker not delivered"/, output);
});
