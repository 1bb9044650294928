import { create } from "@bufbuild/protobuf";
import { TokenSummarySchema } from "../../src/gen/perps/token/v1/token_pb.js";
import type { TokenSummary } from "../../src/sdk/token-calls.js";

/**
 * A listing's entry as the SDK answers it: the fields given, and every other
 * field of TokenSummary (token.proto) at its default, so that a field added
 * there changes no test that does not set it.
 */
export function tokenSummary(
  fields: Pick<TokenSummary, "id" | "name" | "expiresAt">,
): TokenSummary {
  const { $typeName: _type, $unknown: _unknown, ...summary } = create(TokenSummarySchema, fields);
  return summary;
}
