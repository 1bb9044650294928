import type { JsonValue } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";

/**
 * The google.rpc.Status JSON body. `details` are protojson Any values, as
 * errorDetailsJson makes them from a ConnectError's details; default none.
 */
export function statusJson(
  code: Code,
  message: string,
  details: readonly JsonValue[] = [],
): string {
  return JSON.stringify({ code, message, details });
}
