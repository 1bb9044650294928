import assert from "node:assert/strict";
import { ConnectError } from "@connectrpc/connect";

/** The ConnectError a call fails with; fails the test if it succeeds. */
export async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) {
      return err;
    }
    throw err;
  }
  assert.fail("expected the call to fail");
}
