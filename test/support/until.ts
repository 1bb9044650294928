import assert from "node:assert/strict";

/** Resolves once `check` holds, looking again every few milliseconds; fails after `ms`. */
export async function until(check: () => boolean, ms = 5000): Promise<void> {
  const giveUp = Date.now() + ms;
  while (!check()) {
    assert.ok(Date.now() < giveUp, `still not so: ${check}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
