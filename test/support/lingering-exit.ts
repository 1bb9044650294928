// Loaded into every test process (`node --import`): a test file's process
// that is still alive 10 s after its last test and hook ends, with the
// outcome its tests gave. `node --test` waits for each file's process without
// a bound, so one left handle (seen under TEST_REDIS=cluster: a timer node
// still counted as referenced, with no socket open) would hold the whole run.
// `--test-force-exit` does this too, but on node 24 it drops tests that have
// not run yet, without failing (test/unit/support/lingering-exit.test.ts).
import { after } from "node:test";

export const LINGER_MS = Number(process.env.TEST_LINGER_MS ?? "10000");

after(() => {
  setTimeout(() => {
    process.stderr.write(
      `lingering-exit: this test process was still alive ${LINGER_MS} ms after its tests; ending it (a handle was left open)\n`,
    );
    process.exit();
  }, LINGER_MS).unref();
});
