import { after, before } from "node:test";
import { lateValue } from "./late-value.js";

/**
 * What `start` makes, for the tests of the describe block that calls this:
 * made before its first test, closed after its last.
 */
export function suiteValue<T extends { close(): Promise<void> | void }>(
  name: string,
  start: () => Promise<T>,
): T {
  const [value, set, isSet] = lateValue<T>(name);
  before(async () => {
    set(await start());
  });
  after(async () => {
    if (isSet()) {
      await value.close();
    }
  });
  return value;
}
