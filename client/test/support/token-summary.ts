import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { TokenSummarySchema } from "../../src/gen/perps/token/v1/token_pb.js";
import type { TokenSummary } from "../../src/sdk/token-calls.js";

/** A listing's entry without the instants the service stamps (creation, exact expiry, last use). */
export type ComparableSummary = Omit<TokenSummary, "createdAt" | "expiresAtTime" | "lastUsedAt">;

/**
 * A listing's entry as the SDK answers it: the fields given, the default
 * scopes (read, trade), and every other field of TokenSummary (token.proto)
 * at its default, so that a field added there changes no test that does not
 * set it; compare it with `comparable` entries.
 */
export function tokenSummary(
  fields: Pick<TokenSummary, "id" | "name" | "expiresAt">,
): ComparableSummary {
  const {
    $typeName: _type,
    $unknown: _unknown,
    createdAt: _created,
    expiresAtTime: _expiry,
    lastUsedAt: _used,
    ...summary
  } = create(TokenSummarySchema, { scopes: ["read", "trade"], ...fields });
  return summary;
}

const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Listed entries with their instants checked (RFC 3339; the exact expiry on its date) and left out. */
export function comparable(entries: readonly TokenSummary[]): ComparableSummary[] {
  return entries.map(({ createdAt, expiresAtTime, lastUsedAt, ...entry }) => {
    if (lastUsedAt !== undefined) {
      assert.match(lastUsedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    }
    assert.match(String(createdAt), INSTANT);
    assert.match(expiresAtTime, INSTANT);
    assert.equal(expiresAtTime.slice(0, 10), entry.expiresAt);
    return entry;
  });
}
