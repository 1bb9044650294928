import type { ListedKey } from "./user-key-client.js";

const HEADERS = ["ADDED (UTC)", "FINGERPRINT", "PUBLIC KEY"] as const;

/** When a key was added, as printed: the UTC time, or "unknown" when not recorded. */
export function addedAtText(addedAtMs: number | undefined): string {
  return addedAtMs === undefined ? "unknown" : new Date(addedAtMs).toISOString();
}

/**
 * `list-keys`'s answer for people: a table of the time each key was added,
 * its fingerprint and the key itself (to pass to `delete-key --public-key`),
 * or "No keys." when the user has none.
 */
export function keyListText(keys: readonly ListedKey[]): string {
  if (keys.length === 0) {
    return "No keys.";
  }
  const rows = [
    [...HEADERS],
    ...keys.map((k) => [addedAtText(k.addedAtMs), k.fingerprint, k.publicKey]),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((r) => r[column]?.length ?? 0)));
  return rows
    .map(
      ([added = "", fingerprint = "", publicKey = ""]) =>
        `${added.padEnd(widths[0] ?? 0)}  ${fingerprint.padEnd(widths[1] ?? 0)}  ${publicKey}`,
    )
    .join("\n");
}
